/* How an execution of a session starts: the session's supervisor does it.
 *
 * `sandbox exec` never enters the container itself.  It connects to the
 * supervisor's socket (ROOT/.sandbox/sessions/NAME/exec.sock, in a 0700
 * root directory), sends the command, its environment and its stdio fds;
 * the supervisor forks a worker that starts the process with the core's
 * exec API and stays its parent: it sends back a pidfd of the process
 * once it runs and its exit status once it ended, and kills it if the
 * client goes away first.  The client, which never joins the container's
 * namespaces, needs no protective re-execution (CVE-2019-5736): the
 * supervisor made it once, when the session started.  That, and a
 * supervisor that has everything loaded, is what makes a warm execution
 * cheap. */
#ifndef SANDRUN_SANDBOX_SESSION_SPAWN_H
#define SANDRUN_SANDBOX_SESSION_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sandrun/container.h"
#include "sandrun/exec.h"
#include "sandrun/error.h"
#include "sandrun/wait.h"

#define SB_SPAWN_SOCKET "exec.sock"

/* The supervisor's listening socket in `dir`. */
int sb_spawn_listen (const char *dir, sr_error **err);
/* One connection is waiting on `listen_fd`: fork the worker that serves
 * it (container `id`, whose exec *prep holds once loaded); the supervisor
 * reaps it (and what it leaves). */
void sb_spawn_accept (const struct sr_globals *g, const char *id,
                      int listen_fd, sr_exec_prepared **prep);

struct sb_spawn_request
{
  char **args;
  char **env;
  const char *cwd;
  int fds[4]; /* stdin, stdout, stderr, and the kernel client's fd 3 or -1 */
  /* If the client goes away: kill, with the process, every process of the
   * sandbox but these (those there before it started). */
  bool sweep;
  const pid_t *keep;
  size_t n_keep;
};

/* Kill every process of container `id` that is not in old[], until none is
 * left (they may be forking; a double fork or setsid does not leave the
 * cgroup). */
void sb_spawn_kill_new (const struct sr_globals *g, const char *id,
                        const pid_t *old, size_t n_old);

/* Client: start the process; *conn stays open for sb_spawn_wait. */
int sb_spawn_start (const char *dir, const struct sb_spawn_request *rq,
                    int *conn, pid_t *pid, int *pidfd, sr_error **err);
/* Client: the process's exit, as its worker saw it. */
int sb_spawn_wait (int conn, struct sr_exit *ex, sr_error **err);

#endif
