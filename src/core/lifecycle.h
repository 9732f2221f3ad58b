/* Internals shared by the lifecycle files (container.c, create.c, ...):
 * a loaded container and what works on it. */
#ifndef SANDRUN_LIFECYCLE_H
#define SANDRUN_LIFECYCLE_H

#include <stdbool.h>
#include <sys/types.h>

#include "core/cgroup/cgroup.h"
#include "sandrun/container.h"
#include "core/state.h"

/* A loaded container: its record, config and derived status. */
typedef struct
{
  sr_store store;
  int dirfd; /* locked */
  sr_record rec;
  oci_config *cfg; /* parsed lazily by those who need it, else NULL */
  sr_status status;
} sr_container;

int sr_container_load (const struct sr_globals *g, const char *id,
                       bool exclusive, sr_container *c, sr_error **err);
void sr_container_release (sr_container *c);
/* The config saved at create time (parsed on first call). */
const oci_config *sr_container_config (sr_container *c, sr_error **err);

/* The state JSON (runtime.md) of a loaded container; malloc'd. */
char *sr_container_state_json (sr_container *c);

#define SR_CONTAINER_INIT { .store = { .root_fd = -1 }, .dirfd = -1 }

static inline void
sr_container_releasep (sr_container *c)
{
  sr_container_release (c);
}
#define _cleanup_container_ __attribute__ ((cleanup (sr_container_releasep)))

/* Load container `id` (*c, not locked) and open its cgroup (*cg), for
 * reading its figures: "not running" when it is stopped.  Shared by events
 * and sr_container_stats.  The caller releases both. */
int sr_container_open_cgroup (const struct sr_globals *g, const char *id,
                              sr_container *c, sr_cgroup **cg, sr_error **err);

/* The status of a loaded container as it is now (sr_container_load sets
 * c->status once); `cg`, its cgroup if open already, or NULL. */
sr_status sr_container_status_now (const sr_container *c, const sr_cgroup *cg);

/* The init is alive and is the process we started (pid not recycled, not a
 * zombie).  start_time 0 skips the recycling check. */
bool sr_init_alive (pid_t pid, unsigned long long start_time);

/* Kill what is left, remove the cgroup, run poststop hooks (cfg may be
 * NULL), remove the state directory. */
int sr_container_destroy (sr_container *c, const oci_config *cfg, sr_error **err);

/* --pid-file: the pid in decimal, written atomically (create, run, exec). */
int sr_write_pid_file (const char *path, pid_t pid, sr_error **err);

#endif
