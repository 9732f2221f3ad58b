/* The state store under --root: one directory per container,
 *   <root>/<id>/state.json   the runtime's record, replaced atomically
 *   <root>/<id>/config.json  the config as it was at create time
 *   <root>/<id>/exec.fifo    exists between create and start
 * The container directory itself is the lock (flock): every command that
 * changes a container holds it exclusively.  The id is reserved by mkdir
 * before anything else is allocated, so `delete --force` can always clean
 * up after a create that died half-way. */
#ifndef SANDRUN_STATE_H
#define SANDRUN_STATE_H

#include <stdbool.h>
#include <sys/types.h>

#include "oci-spec/types.h"
#include "sandrun/error.h"

#define SR_DEFAULT_ROOT "/run/sandrun"
#define SR_MAX_ID_LEN 1024

typedef struct
{
  char *id;
  pid_t pid;                      /* 0 until the init exists */
  unsigned long long start_time;  /* of the init, from /proc/PID/stat: guards pid reuse */
  char *bundle;
  char *rootfs;
  char *created;                  /* RFC 3339, nanoseconds */
  char *owner;
  char *cgroup_path;              /* NULL until the cgroup exists */
  bool created_done;              /* create finished (else: creating) */
  bool systemd_cgroup;
  bool cgroup_shared;             /* the cgroup had other processes at create */
  oci_map annotations;
} sr_record;

typedef struct
{
  char *root;  /* --root */
  int root_fd; /* O_PATH|O_DIRECTORY */
} sr_store;

/* Open (and with `create`, make: mode 0700) the root directory. */
int sr_store_open (const char *root, bool create, sr_store *store,
                   sr_error **err);
void sr_store_close (sr_store *store);

/* Container ids: [A-Za-z0-9][A-Za-z0-9_+.-]*, at most SR_MAX_ID_LEN bytes
 * ("." and ".." refused). */
int sr_validate_id (const char *id, sr_error **err);

/* Reserve `id`: mkdir of its directory (EEXIST: "container \"ID\" already
 * exists"), returns the locked directory fd. */
int sr_store_reserve (sr_store *store, const char *id, sr_error **err);

/* "container ID does not exist", errnum ENOENT (the message has no
 * strerror: a missing container is not a system error). */
int sr_fail_no_container (sr_error **err, const char *id);

/* Open an existing container's directory ("container \"ID\" does not
 * exist"), locked when `exclusive` (readers take no lock). */
int sr_store_lock (sr_store *store, const char *id, bool exclusive,
                   sr_error **err);

/* Remove a container's directory and everything in it. */
int sr_store_remove (sr_store *store, const char *id, sr_error **err);

/* The record in a container directory. */
int sr_record_write (int dirfd, const sr_record *rec, sr_error **err);
int sr_record_read (int dirfd, sr_record *rec, sr_error **err);
void sr_record_clear (sr_record *rec);

/* Names of all containers (sorted), NULL-terminated. */
int sr_store_list (sr_store *store, char ***ids, sr_error **err);

/* Write a file in dirfd atomically (tmp + fsync-free rename: the store is on
 * tmpfs; a pid file may not be). */
int sr_write_file_atomic (int dirfd, const char *name, const void *data,
                          size_t len, mode_t mode, sr_error **err);


/* A process's state letter and start time (clock ticks since boot) from
 * one read of /proc/PID/stat; -1 when it is gone. */
int sr_proc_stat (pid_t pid, char *state, unsigned long long *start_time);
/* Field 22 of /proc/PID/stat (0 when the process does not exist). */
unsigned long long sr_proc_start_time (pid_t pid);

#endif
