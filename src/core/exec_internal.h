/* Internals of `exec`, shared by its files only: the process it runs
 * (exec_process.c), the child that joins the container (exec_join.c) and
 * the parent that drives it (exec.c). */
#ifndef SANDRUN_EXEC_INTERNAL_H
#define SANDRUN_EXEC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci-spec/types.h"
#include "core/cgroup/cgroup.h"
#include "sandrun/error.h"
#include "sandrun/exec.h"
#include "core/spawn.h"

/* The process an exec runs: `p` borrows from the container's process and
 * from the members below, which it owns. */
struct sr_exec_process
{
  oci_process p;
  oci_process *file;     /* --process, parsed */
  char **env;            /* with the -e entries */
  oci_capabilities caps; /* with the -c entries */
  uint32_t *gids;        /* with the -g entries */
};

/* Compose the process from the container's (`base`) and the options. */
int sr_exec_process_make (const oci_process *base,
                          const struct sr_exec_opts *opts,
                          struct sr_exec_process *out, sr_error **err);
void sr_exec_process_clear (struct sr_exec_process *x);

/* What the child needs; `spawn` first, so that the child entry point gets
 * back here from the sr_spawn_ctx it is given. */
struct sr_exec_child
{
  struct sr_spawn_ctx spawn; /* cfg: the container's with the exec's process */
  pid_t init_pid;
  unsigned long long init_start_time;
  int init_pidfd; /* -1 on kernels without pidfd_open */
  int join_flags; /* CLONE_NEW* of the init that differ from ours */
};

/* Parent: the namespaces of `pid` that are not the runtime's (compared by
 * their nsfs inodes; for pid and time, against what our children get). */
int sr_exec_ns_to_join (pid_t pid, int *flags, sr_error **err);

/* The child: sr_spawn_ctx.child_main of an exec.  Never returns. */
void sr_exec_child_main (struct sr_spawn_ctx *spawn, int sync_fd)
    __attribute__ ((noreturn));

#endif
