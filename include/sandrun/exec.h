/* `exec`: one more process inside a live (created or running) container, as
 * runc's exec runs it.
 *
 * The process is the container's own process (its saved config.json) with
 * the overrides below, or the process object of --process alone (runc's
 * semantics: the other process flags are then ignored; capabilities,
 * rlimits, labels and oomScoreAdj it does not set are the container's).
 *
 * No re-exec of the runtime: the parent clones a child into the container's
 * cgroup, which joins every namespace of the container's init that differs
 * from the runtime's (setns on a pidfd of the init), forks once more when the
 * pid or time namespace is joined (they apply to children only), then takes
 * the init's process steps (terminal, rlimits, seccomp, identity, labels,
 * no_new_privs) and execs.  Failures before execve reach the parent over the
 * sync socket (sync.h) and are reported as `exec "ID": CAUSE`. */
#ifndef SANDRUN_EXEC_H
#define SANDRUN_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandrun/container.h"
#include "sandrun/error.h"

struct sr_exec_opts
{
  const char *process_file; /* --process: the whole process object */
  char **args;              /* the command and its arguments */
  bool tty;                 /* -t: process.terminal */
  const char *console_socket;
  bool detach;
  const char *pid_file;
  pid_t *pid; /* where to put the process's pid once it started, or NULL */
  char **env; /* -e KEY=VALUE: replaces the container's KEY, else added */
  const char *cwd;
  bool uid_set, gid_set; /* -u uid[:gid]; a uid alone keeps the gid */
  uint32_t uid, gid;
  uint32_t *additional_gids; /* -g: added to the container's */
  size_t additional_gids_len;
  /* -c: added to bounding, effective and permitted, never to inheritable
   * or ambient (CVE-2022-29162).  "CAP_X", "X" or "x". */
  char **caps;
  bool no_new_privs;         /* set it (never clears the container's) */
  const char *apparmor;      /* "" or NULL: the container's */
  const char *process_label; /* SELinux; likewise */
  int preserve_fds;
  /* --cgroup "[CONTROLLER[,CONTROLLER]:]PATH": an existing sub-cgroup of
   * the container's cgroup; one bare PATH stands for every hierarchy. */
  char **cgroups;
  bool ignore_paused;
};

/* Refused for a stopped, creating or (without ignore_paused) paused
 * container.  Returns 0 when the process started; in the foreground, after
 * it exited, with its exit status (128+N when killed by signal N) in
 * *exit_status.  With a terminal and no console socket, the foreground exec
 * is the terminal's other end itself (as run). */
int sr_container_exec (const struct sr_globals *g, const char *id,
                       const struct sr_exec_opts *opts, int *exit_status,
                       sr_error **err);

/* An exec made ready once for many runs in the same container (a
 * session's supervisor): the state, the saved config, the cgroup, the
 * seccomp program and the init's namespaces are loaded by sr_exec_prepare;
 * each run checks the container's status again (paused since, init gone)
 * and composes its own process.  `g` must outlive it.  Usable from a forked
 * child of the process that prepared it. */
typedef struct sr_exec_prepared sr_exec_prepared;

int sr_exec_prepare (const struct sr_globals *g, const char *id,
                     sr_exec_prepared **out, sr_error **err);
int sr_exec_prepared_run (const sr_exec_prepared *p,
                          const struct sr_exec_opts *opts, int *exit_status,
                          sr_error **err);
void sr_exec_prepared_free (sr_exec_prepared *p);

#endif
