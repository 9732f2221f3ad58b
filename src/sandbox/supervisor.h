/* The supervisor: runs a created sandbox's process to its end, streaming
 * and capturing its output, enforcing the wall-clock and output limits and
 * turning the caller's SIGINT/SIGTERM/SIGHUP into a stop. */
#ifndef SANDRUN_SANDBOX_SUPERVISOR_H
#define SANDRUN_SANDBOX_SUPERVISOR_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "options.h"
#include "sandrun/error.h"
#include "sandrun/wait.h"

/* One output stream of the process: what was captured (at most the
 * limit), and where it is copied as it comes. */
struct sb_stream
{
  int fd;      /* our end of the pipe, -1 at EOF */
  int copy_to; /* the caller's fd, or -1 */
  char *data;
  size_t len;
  uint64_t total; /* bytes the process wrote, captured or not */
  bool truncated;
};

struct sb_outcome
{
  int exit_code; /* -1 when a signal ended the process */
  int signal;
  bool timed_out;
  bool output_exceeded;
  int interrupted;   /* the caller's signal that stopped it, or 0 */
  char *start_error; /* why the command could not be started (126, 127) */
  int64_t duration_ms;
};

struct sb_supervisor
{
  const struct sb_options *o;
  pid_t pid;
  int pidfd;
  int sigfd; /* signalfd for SIGINT, SIGTERM, SIGHUP */
  struct sb_stream out, err;
  int64_t started_ms;
  /* Sessions: how to stop the execution (the process and what it
   * started), instead of signalling pidfd alone; NULL for the one-shot. */
  void (*kill) (struct sb_supervisor *s, int sig);
  void *data;
  /* At the timeout, SIGINT first and SIGKILL only after the grace period
   * (a kernel session's interpreter gets a KeyboardInterrupt). */
  bool interrupt_first;
  /* Called every SB_SAMPLE_MS while the process runs (the peaks that the
   * cgroup does not keep, such as the number of processes, and the limits
   * that are watched, not enforced by the kernel): true stops the run. */
  bool (*sample) (void *arg);
  void *sample_arg;
  /* How the process's exit status is learnt when it is not our child (a
   * session's execution: its worker tells); NULL: wait on pidfd. */
  int (*wait_exit) (struct sb_supervisor *s, struct sr_exit *ex);
};

#define SB_SAMPLE_MS 50

/* The signals the supervisor takes over (blocked before the process is
 * created, so that none is lost). */
void sb_supervisor_block_signals (sigset_t *set, sigset_t *old);

/* Run until the process ended: fills *res but for its status.  Never
 * fails: whatever goes wrong ends in the process being killed.  The
 * process is left unreaped, so that its cgroup can still be read. */
void sb_supervise (struct sb_supervisor *s, struct sb_outcome *res);
/* Reap it, fill its status, read what is left of its output. */
void sb_supervisor_reap (struct sb_supervisor *s, struct sb_outcome *res);

/* The command itself could not be started (not found, not executable):
 * true when *err says so, and then *res is the command's failure, as a
 * shell's 127 or 126, with the reason in start_error (*err is consumed). */
bool sb_outcome_start_failed (struct sb_outcome *res, int64_t started_ms,
                              sr_error **err);

/* The exit status sandrun returns: the command's, 128+N for signal N (the
 * caller's signal when it interrupted the run). */
int sb_outcome_status (const struct sb_outcome *res);

void sb_stream_clear (struct sb_stream *st);
/* Close the fds and free the output it holds. */
void sb_supervisor_clear (struct sb_supervisor *s);

#endif
