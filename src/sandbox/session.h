/* Sessions (issue 14): one sandbox whose /work, /tmp and processes live
 * across executions, still ephemeral in the end.
 *
 * No daemon: `sandbox start` leaves one small supervisor process per session
 * (double-forked) that made the sandbox's bundle in its own mount namespace,
 * owns its container and ends it at `stop`, the idle timeout or the maximum
 * lifetime.  It holds the session's lock (ROOT/.sandbox/sessions/NAME/lock)
 * for as long as it lives: a free lock means a dead supervisor, and the
 * next sandrun reclaims what is left (its watchdog has already killed the
 * container).  The other commands are ordinary sandrun processes that find
 * the session in its state directory (root's, 0700), check the lock, join
 * the supervisor's mount namespace and use the core's exec API; see
 * docs/sessions.md. */
#ifndef SANDRUN_SANDBOX_SESSION_H
#define SANDRUN_SANDBOX_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bundle.h"
#include "options.h"
#include "receipt.h"
#include "sandrun/container.h"
#include "sandrun/error.h"

#define SB_SESSIONS_DIR "sessions"
#define SB_DEFAULT_IDLE_MS (10 * 60 * 1000)
#define SB_DEFAULT_LIFETIME_MS (60 * 60 * 1000)
/* Where the python kernel's driver lives in the sandbox (root-owned). */
#define SB_KERNEL_DIR "/tmp/.sandrun-kernel"
#define SB_KERNEL_DRIVER SB_KERNEL_DIR "/driver.py"

struct sb_session_opts
{
  char *name;
  int64_t idle_ms;     /* 0: none */
  int64_t lifetime_ms; /* 0: none */
  char *kernel;        /* NULL or "python" */
  char **flags;        /* the one-shot options as given, for the executions */
};

/* A live session, as its state directory describes it. */
struct sb_session
{
  char *name;
  char *dir; /* ROOT/.sandbox/sessions/NAME */
  pid_t pid; /* the supervisor */
  int pidfd;
  char **flags;
  char *kernel;
  char *created;
  int64_t idle_ms, lifetime_ms;
  /* --allow-host: the egress gateway's control socket and log, fds of the
   * supervisor's (session_egress.h); -1 without */
  int egress_control_fd, egress_log_fd;
  struct sb_bundle b; /* id, work, tmp, ids and host paths; nothing held */
};

void sb_session_opts_clear (struct sb_session_opts *so);

/* A session name: 1 to 64 of [A-Za-z0-9_.-], not starting with a dot. */
bool sb_session_name_ok (const char *name);

int sb_session_start (const struct sr_globals *g, const struct sb_options *o,
                      const struct sb_session_opts *so, sr_error **err);
/* Find the live session `name`; -1 with ENOENT when there is none. */
int sb_session_open (const struct sr_globals *g, const char *name,
                     struct sb_session *s, sr_error **err);
void sb_session_close (struct sb_session *s);
/* Join the supervisor's mount namespace, where /work and /tmp are. */
int sb_session_enter (const struct sb_session *s, sr_error **err);
/* Mark the session used now (the idle timeout counts from here). */
void sb_session_touch (const struct sb_session *s);

int sb_session_stop (const struct sr_globals *g, const char *name,
                     sr_error **err);
int sb_session_list (const struct sr_globals *g, bool json, sr_error **err);
/* Remove what sessions whose supervisor died left behind. */
void sb_session_reclaim (const struct sr_globals *g);

/* One execution: `o` is the session's options with this execution's
 * overrides; `code` (kernel sessions) is the code to run, else o->argv. */
int sb_session_exec (const struct sr_globals *g, const struct sb_session *s,
                     const struct sb_options *o, const char *code, int *status,
                     sr_error **err);

/* `cp`: host `src` into the session at `dst` (to_session), or the
 * session's `src` out to host `dst`. */
int sb_session_cp (const struct sb_session *s, const char *src,
                   const char *dst, bool to_session, sr_error **err);
/* Open `path` (absolute, under /work or /tmp) in the session, never
 * leaving its /work or /tmp (openat2 RESOLVE_IN_ROOT). */
int sb_session_openat (const struct sb_session *s, const char *path, int flags,
                       mode_t mode, sr_error **err);

#endif
