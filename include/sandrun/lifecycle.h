/* Internals shared by the lifecycle files (container.c, create.c). */
#ifndef SANDRUN_LIFECYCLE_H
#define SANDRUN_LIFECYCLE_H

#include <stdbool.h>
#include <sys/types.h>

#include "sandrun/container.h"

#define SR_CONTAINER_INIT { .store = { .root_fd = -1 }, .dirfd = -1 }

static inline void
sr_container_releasep (sr_container *c)
{
  sr_container_release (c);
}
#define _cleanup_container_ __attribute__ ((cleanup (sr_container_releasep)))

/* The init is alive and is the process we started (pid not recycled, not a
 * zombie).  start_time 0 skips the recycling check. */
bool sr_init_alive (pid_t pid, unsigned long long start_time);

/* Kill what is left, remove the cgroup, run poststop hooks (cfg may be
 * NULL), remove the state directory. */
int sr_container_destroy (sr_container *c, const oci_config *cfg, sr_error **err);

/* --pid-file: the pid in decimal, written atomically (create, run, exec). */
int sr_write_pid_file (const char *path, pid_t pid, sr_error **err);

#endif
