/* The ephemeral side of a sandbox: its id, its directory under the state
 * root, the host ids it runs as, the root skeleton and the tmpfs /work and
 * /tmp.  Everything here is made in a private mount namespace of the
 * calling process, so no mount outlives it; what is left on disk after a
 * SIGKILL (a few empty directories, lock files) is reclaimed by the next
 * sandbox. */
#ifndef SANDRUN_SANDBOX_BUNDLE_H
#define SANDRUN_SANDBOX_BUNDLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "options.h"
#include "sandrun/container.h"
#include "sandrun/error.h"

/* The sandboxed process's uid and gid inside. */
#define SB_USER_ID 1000
/* Each concurrent sandbox gets its own block of host ids: container ids
 * 0..SB_ID_RANGE-1 map to host_base..host_base+SB_ID_RANGE-1. */
#define SB_ID_RANGE 65536u
#define SB_HOST_ID_BASE 0x60000000u
#define SB_MAX_SLOTS 4096u

/* The directory, under the state root, of the sandboxes' locks. */
#define SB_STATE_DIR ".sandbox"
/* Where a sandrun process mounts its sandboxes' roots, /work and /tmp: a
 * tmpfs in its private mount namespace, on a path every uid can traverse
 * (the container's init runs as an unprivileged host uid). */
#define SB_RUN_DIR "/run/sandrun-sandbox"

struct sb_bundle
{
  char *id;          /* the container's id */
  char *dir;         /* ROOT/.sandbox/ID: its lock */
  char *scratch;     /* SB_RUN_DIR/ID: the mounts, private to this process */
  char *rootfs;      /* the root the container gets: SCRATCH/root */
  char *work;        /* what /work is: the --workdir or SCRATCH/work (tmpfs) */
  char *tmp;         /* SCRATCH/tmp (tmpfs), /tmp in the sandbox */
  char *work_source; /* what the container binds at /work: SCRATCH/work, or
                        SCRATCH/workdir, a bind of --workdir reachable by the
                        container's unprivileged init */
  bool ephemeral_work;
  uint32_t slot;
  uid_t host_base; /* container id 0 on the host */
  uid_t work_uid;  /* the owner of --workdir */
  gid_t work_gid;
  /* The file system of --workdir cannot be idmapped (tmpfs before Linux
   * 6.3, ...): the sandbox user is then mapped to its owner directly. */
  bool work_direct;
  char **bind_sources; /* --ro-bind sources, bound under SCRATCH/binds */
  char **host_paths; /* host files and dirs shown read-only at the same path */
  int lock_fd;       /* flock held on DIR/lock while the sandbox lives */
  int slot_fd;       /* flock held on the slot's lock file */
};

#define SB_BUNDLE_INIT                                                        \
  {                                                                           \
    .lock_fd = -1, .slot_fd = -1                                              \
  }

/* The host uid the sandboxed process runs as. */
static inline uid_t
sb_bundle_user_uid (const struct sb_bundle *b)
{
  return b->host_base + SB_USER_ID;
}

/* Enter a private mount namespace (once per process), reclaim what dead
 * sandboxes left, pick an id and a slot, and make the directories and
 * mounts. */
int sb_bundle_create (const struct sr_globals *g, const struct sb_options *o,
                      struct sb_bundle *b, sr_error **err);
/* Unmount and remove what sb_bundle_create made, release the slot. */
void sb_bundle_destroy (struct sb_bundle *b);

/* Unmount what is mounted on a bundle directory's mount points, remove it. */
void sb_bundle_remove_dir (const char *dir);

/* Delete the containers and directories of sandboxes whose sandrun died
 * (their lock is free).  Best effort: a failure is logged, not returned. */
void sb_reclaim (const struct sr_globals *g);

/* The bytes used and available on a tmpfs we mounted; -1 if unknown. */
int sb_fs_usage (const char *path, uint64_t *used, uint64_t *avail);

#endif
