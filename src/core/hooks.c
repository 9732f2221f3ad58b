/* OCI hooks (runtime-spec config.md "POSIX-platform Hooks"): each hook is
 * forked and exec'd with exactly its own args and env, the container state
 * JSON on stdin, and stdout/stderr going to the runtime's stderr (stdout
 * belongs to `sandrun state` and friends).  The parent feeds stdin and
 * waits with one poll loop, so a hook that never reads its stdin cannot
 * deadlock us, and a hook that outlives its timeout is killed and reaped:
 * no hook is ever left running or unreaped when we return. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/hooks.h"
#include "sandrun/log.h"
#include "sandrun/signals.h"
#include "sandrun/util.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* Without a pidfd we cannot sleep until the child exits, so poll its status
 * at this period instead. */
#define HOOK_POLL_MS 10

/* ---- child side: only async-signal-safe calls from here to execve ------- */

static void __attribute__ ((noreturn))
child_fail (int err_fd, int errnum)
{
  ssize_t r = write (err_fd, &errnum, sizeof errnum);
  (void) r;
  _exit (127);
}

/* stdin = in_fd, stdout = stderr = out_fd (or /dev/null when -1).  Both are
 * first moved above 2 so that no dup2 clobbers the other. */
static int
child_setup_stdio (int in_fd, int out_fd)
{
  int in, out, nul = -1;

  if (out_fd < 0)
    {
      nul = open ("/dev/null", O_WRONLY | O_CLOEXEC);
      if (nul < 0)
        return -1;
      out_fd = nul;
    }
  in = fcntl (in_fd, F_DUPFD_CLOEXEC, 3);
  out = fcntl (out_fd, F_DUPFD_CLOEXEC, 3);
  if (in < 0 || out < 0)
    return -1;
  if (dup2 (in, 0) < 0 || dup2 (out, 1) < 0 || dup2 (out, 2) < 0)
    return -1;
  return 0;
}

/* Fallback when close_range(CLOEXEC) is missing (Linux < 5.11). */
static int
mark_fds_cloexec_slow (void)
{
  struct rlimit rl;
  DIR *d = opendir ("/proc/self/fd");
  int fd;

  if (d != NULL)
    {
      struct dirent *de;
      while ((de = readdir (d)) != NULL)
        {
          fd = atoi (de->d_name);
          if (fd > 2)
            (void) fcntl (fd, F_SETFD, FD_CLOEXEC);
        }
      closedir (d);
      return 0;
    }
  if (getrlimit (RLIMIT_NOFILE, &rl) < 0)
    return -1;
  for (fd = 3; (rlim_t) fd < rl.rlim_cur && fd < (1 << 20); fd++)
    (void) fcntl (fd, F_SETFD, FD_CLOEXEC);
  return 0;
}

/* Everything above 2 closes at execve: the hook inherits nothing of the
 * runtime (sync sockets, the rootfs fd, ...), while the exec-error pipe
 * still works until the exec succeeds. */
static int
mark_fds_cloexec (void)
{
  if (syscall (SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
    return 0;
  return mark_fds_cloexec_slow ();
}

struct hook_exec
{
  const char *path;
  char *const *argv;
  char *const *envp;
  int stdin_fd; /* read end of the state pipe */
  int out_fd;   /* the runtime's stderr, or -1 */
  int err_fd;   /* write end of the exec-error pipe (CLOEXEC) */
  pid_t parent;
};

static void __attribute__ ((noreturn))
hook_child (const struct hook_exec *x)
{
  /* A runtime killed while waiting must not leave its hook behind. */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid () != x->parent)
    _exit (127);
  /* Every disposition, not just the ignored ones: a signal pending in the
   * runtime must not reach one of its handlers once unblocked here. */
  sr_signals_reset (~UINT64_C (0));
  if (child_setup_stdio (x->stdin_fd, x->out_fd) < 0
      || mark_fds_cloexec () < 0)
    child_fail (x->err_fd, errno);
  execve (x->path, x->argv, x->envp);
  child_fail (x->err_fd, errno);
}

/* ---- parent side -------------------------------------------------------- */

struct hook_run
{
  pid_t pid;        /* > 0 while the child is unreaped */
  int pidfd;        /* -1 without pidfd_open (Linux < 5.3) */
  int in_fd;        /* write end of the child's stdin, -1 once done */
  int exec_err_fd;  /* read end of the exec-error pipe */
  const char *data; /* the state JSON */
  size_t len, off;
};

static void
hook_run_cleanup (struct hook_run *r)
{
  if (r->pid > 0)
    {
      int status;
      (void) kill (r->pid, SIGKILL);
      while (waitpid (r->pid, &status, 0) < 0 && errno == EINTR)
        ;
      r->pid = 0;
    }
  sr_close (r->pidfd);
  sr_close (r->in_fd);
  sr_close (r->exec_err_fd);
  r->pidfd = r->in_fd = r->exec_err_fd = -1;
}
#define _cleanup_hook_run_ __attribute__ ((cleanup (hook_run_cleanup)))

/* Write what the pipe takes now.  A hook that exits or closes its stdin
 * without reading gives EPIPE (SIGPIPE is ignored meanwhile): not an error,
 * it just did not want the state. */
static void
feed_stdin (struct hook_run *r)
{
  while (r->off < r->len)
    {
      ssize_t n = write (r->in_fd, r->data + r->off, r->len - r->off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return;
      if (n <= 0)
        break;
      r->off += (size_t) n;
    }
  sr_close (r->in_fd);
  r->in_fd = -1;
}

/* Sleep until the child may have exited, stdin may take more, or the
 * deadline (-1: none) passes. */
static void
wait_for_events (struct hook_run *r, int64_t deadline)
{
  struct pollfd fds[2];
  nfds_t n = 0;
  int timeout = -1;

  if (r->pidfd >= 0)
    fds[n++] = (struct pollfd){ .fd = r->pidfd, .events = POLLIN };
  else
    timeout = HOOK_POLL_MS;
  if (r->in_fd >= 0)
    fds[n++] = (struct pollfd){ .fd = r->in_fd, .events = POLLOUT };
  if (deadline >= 0)
    {
      int64_t left = deadline - sr_monotonic_ms ();
      if (left < 0)
        left = 0;
      if (timeout < 0 || left < timeout)
        timeout = (int) left;
    }

  if (poll (fds, n, timeout) > 0 && r->in_fd >= 0 && fds[n - 1].revents)
    feed_stdin (r);
}

/* Returns 0 with *status once the child exited, 1 on timeout (the child is
 * then killed and reaped), -1 with errno on a wait failure. */
static int
wait_hook (struct hook_run *r, int timeout_s, int *status)
{
  int64_t deadline = timeout_s > 0 ? sr_monotonic_ms () + (int64_t) timeout_s * 1000
                                   : -1;
  for (;;)
    {
      pid_t w = waitpid (r->pid, status, WNOHANG);
      if (w == r->pid)
        {
          r->pid = 0;
          return 0;
        }
      if (w < 0 && errno != EINTR)
        {
          /* Not ours to wait for any more (SIGCHLD ignored?): never signal
           * a pid that may have been recycled. */
          r->pid = 0;
          return -1;
        }
      if (deadline >= 0 && sr_monotonic_ms () >= deadline)
        {
          hook_run_cleanup (r);
          return 1;
        }
      wait_for_events (r, deadline);
    }
}

/* argv = hook.args (args[0] is argv[0]), or [path] when args is absent or
 * empty. */
static char **
hook_argv (const oci_hook *h)
{
  char **argv;

  if (h->args != NULL && h->args[0] != NULL)
    return strv_dup (h->args);
  argv = xcalloc (2, sizeof *argv);
  argv[0] = xstrdup (h->path);
  return argv;
}

static int
spawn_hook (const oci_hook *h, struct hook_run *r, const char *what,
            sr_error **err)
{
  _cleanup_strv_ char **argv = hook_argv (h);
  char *no_env[] = { NULL };
  int in_pipe[2], err_pipe[2];
  struct hook_exec x = {
    .path = h->path,
    .argv = argv,
    .envp = h->env ? h->env : no_env,
    /* Decided before the pipes exist: with fd 2 closed a pipe could
     * otherwise take its number and become the hook's "stderr". */
    .out_fd = fcntl (2, F_GETFD) >= 0 ? 2 : -1,
    .parent = getpid (),
  };

  if (pipe2 (in_pipe, O_CLOEXEC) < 0)
    return sr_fail (err, errno, "%s: pipe", what);
  r->in_fd = in_pipe[1];
  if (pipe2 (err_pipe, O_CLOEXEC) < 0)
    {
      sr_close (in_pipe[0]);
      return sr_fail (err, errno, "%s: pipe", what);
    }
  r->exec_err_fd = err_pipe[0];
  x.stdin_fd = in_pipe[0];
  x.err_fd = err_pipe[1];

  r->pid = fork ();
  if (r->pid == 0)
    hook_child (&x);
  sr_close (in_pipe[0]);
  sr_close (err_pipe[1]);
  if (r->pid < 0)
    {
      r->pid = 0;
      return sr_fail (err, errno, "%s: fork", what);
    }

  r->pidfd = (int) syscall (SYS_pidfd_open, r->pid, 0);
  if (fcntl (r->in_fd, F_SETFL, O_NONBLOCK) < 0)
    return sr_fail (err, errno, "%s: set stdin non-blocking", what);
  return 0;
}

/* The verdict once the child has been reaped. */
static int
hook_result (struct hook_run *r, int status, const char *what,
             sr_error **err)
{
  int exec_errno;

  if (sr_read_all (r->exec_err_fd, &exec_errno, sizeof exec_errno)
      == (ssize_t) sizeof exec_errno)
    return sr_fail (err, exec_errno, "%s: exec", what);
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;
  if (WIFEXITED (status))
    return sr_fail (err, 0, "%s: exited with status %d", what,
                    WEXITSTATUS (status));
  if (WIFSIGNALED (status))
    return sr_fail (err, 0, "%s: killed by signal %d", what,
                    WTERMSIG (status));
  return sr_fail (err, 0, "%s: unexpected wait status 0x%x", what, status);
}

static int
run_hook (const oci_hook *h, const char *kind, const char *state_json,
          sr_error **err)
{
  _cleanup_hook_run_ struct hook_run r = {
    .pidfd = -1, .in_fd = -1, .exec_err_fd = -1,
    .data = state_json ? state_json : "",
  };
  _cleanup_free_ char *what = NULL;
  int timeout = h->timeout.set ? h->timeout.value : 0;
  int status, ret;

  what = xasprintf ("%s hook \"%s\"", kind, h->path ? h->path : "");
  if (h->path == NULL || h->path[0] != '/')
    return sr_fail (err, 0, "%s: path must be absolute", what);
  if (h->timeout.set && h->timeout.value <= 0)
    return sr_fail (err, 0, "%s: timeout must be greater than zero, got %d",
                    what, h->timeout.value);
  r.len = strlen (r.data);

  if (spawn_hook (h, &r, what, err) < 0)
    return -1;
  ret = wait_hook (&r, timeout, &status);
  if (ret < 0)
    return sr_fail (err, errno, "%s: wait", what);
  if (ret > 0)
    return sr_fail (err, 0, "%s: timed out after %ds", what, timeout);
  return hook_result (&r, status, what, err);
}

/* Run the hooks in order.  Without warn_only the first failure stops the
 * run and fills *err; with it every hook runs and each failure is logged.
 * Returns the number of failures.  SIGPIPE is ignored meanwhile: writing
 * the state to a hook that exited must give EPIPE, not kill the runtime. */
static int
run_list (const oci_hook_list *list, const char *kind, const char *state_json,
          bool warn_only, sr_error **err)
{
  struct sigaction ign, old;
  size_t i;
  int failed = 0;

  if (list == NULL || list->len == 0)
    return 0;
  memset (&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigaction (SIGPIPE, &ign, &old);
  for (i = 0; i < list->len && (warn_only || failed == 0); i++)
    {
      _cleanup_error_ sr_error *e = NULL;
      if (run_hook (&list->v[i], kind, state_json, warn_only ? &e : err) < 0)
        {
          failed++;
          if (warn_only)
            sr_warn ("%s", e->msg);
        }
    }
  sigaction (SIGPIPE, &old, NULL);
  return failed;
}

int
sr_hooks_run (const oci_hook_list *list, const char *kind,
              const char *state_json, sr_error **err)
{
  return run_list (list, kind, state_json, false, err) > 0 ? -1 : 0;
}

int
sr_hooks_run_warn (const oci_hook_list *list, const char *kind,
                   const char *state_json)
{
  return run_list (list, kind, state_json, true, NULL);
}
