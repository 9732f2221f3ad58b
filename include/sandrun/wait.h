/* Waiting for a child process through its pidfd, with a deadline: what a
 * caller that stays alive (the sandbox supervisor) needs to enforce a
 * wall-clock limit without SIGCHLD handlers or SIGALRM, which a library
 * must not install behind its caller's back. */
#ifndef SANDRUN_WAIT_H
#define SANDRUN_WAIT_H

#include <stdbool.h>

#include "sandrun/error.h"

/* How a process ended. */
struct sr_exit
{
  int code;   /* the exit status, or -1 when a signal ended it */
  int signal; /* the signal that ended it, or 0 */
  bool core_dumped;
};

/* Wait until the process of `pidfd` (the caller's child, or a descendant
 * of a subreaper caller) has ended, then reap it: 0 with *ex filled.  At
 * the deadline (`timeout_ms` from now; 0 polls once, -1 waits forever) -1
 * with an ETIMEDOUT error, the process left running and unreaped, so that
 * the caller may kill it and wait again.  EINTR is retried. */
int sr_wait_exit (int pidfd, int timeout_ms, struct sr_exit *ex,
                  sr_error **err);

/* The same, with the shell's single number: the exit code, or 128+N when
 * signal N ended the process. */
int sr_wait_pidfd (int pidfd, int timeout_ms, int *exit_status,
                   sr_error **err);

#endif
