/* One execution of the MCP server: a child sandrun with its receipt on a
 * pipe (stdout) and its error line on another (stderr).  The child dies
 * with the server (PR_SET_PDEATHSIG), and `sandrun sandbox` stops its
 * sandbox on SIGTERM, so a vanished server leaves no sandbox behind. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mcp.h"
#include "sandrun/util.h"

static void
child (const char *runtime, char **argv, int out, int errfd, pid_t parent)
{
  if (prctl (PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid () != parent)
    _exit (125);
  int null = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0 || dup2 (null, 0) < 0 || dup2 (out, 1) < 0
      || dup2 (errfd, 2) < 0)
    _exit (125);
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  signal (SIGPIPE, SIG_DFL);
  execv (runtime, argv);
  dprintf (2, "sandrun mcp: execute %s: %s\n", runtime, strerror (errno));
  _exit (125);
}

int
mcp_job_spawn (struct mcp_job *j, const char *runtime, char **argv,
               sr_error **err)
{
  int out[2], errp[2];
  if (pipe2 (out, O_CLOEXEC) < 0)
    return sr_fail (err, errno, "pipe");
  if (pipe2 (errp, O_CLOEXEC) < 0)
    return sr_close (out[0]), sr_close (out[1]), sr_fail (err, errno, "pipe");
  pid_t parent = getpid ();
  pid_t pid = fork ();
  if (pid == 0)
    child (runtime, argv, out[1], errp[1], parent);
  sr_close (out[1]);
  sr_close (errp[1]);
  if (pid < 0)
    return sr_close (out[0]), sr_close (errp[0]), sr_fail (err, errno, "fork");
  j->pid = pid;
  j->out_fd = out[0];
  j->err_fd = errp[0];
  fcntl (j->out_fd, F_SETFL, O_NONBLOCK);
  fcntl (j->err_fd, F_SETFL, O_NONBLOCK);
  j->pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (j->pidfd < 0)
    {
      int e = errno;
      mcp_job_finish (j, 0);
      return sr_fail (err, e, "pidfd_open");
    }
  fcntl (j->pidfd, F_SETFD, FD_CLOEXEC);
  return 0;
}

static void
buf_add (struct mcp_buf *b, const char *p, size_t n)
{
  if (b->len + n > b->max)
    {
      b->overflow = true;
      n = b->max - b->len;
    }
  if (b->len + n + 1 > b->cap)
    {
      b->cap = (b->len + n + 1) * 2;
      b->data = xrealloc (b->data, b->cap);
    }
  memcpy (b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
}

/* Read until EAGAIN; closes the fd at EOF. */
static void
drain (int *fd, struct mcp_buf *b)
{
  char chunk[65536];
  while (*fd >= 0)
    {
      ssize_t n = read (*fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return;
      if (n <= 0)
        {
          sr_close (*fd);
          *fd = -1;
          return;
        }
      buf_add (b, chunk, (size_t) n);
    }
}

static void
reap (struct mcp_job *j, int flags)
{
  int st;
  pid_t r;
  do
    r = waitpid (j->pid, &st, flags);
  while (r < 0 && errno == EINTR);
  if (r != j->pid)
    return;
  j->exited = true;
  j->status = WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st);
}

bool
mcp_job_pump (struct mcp_job *j, int fd)
{
  if (fd == j->out_fd)
    drain (&j->out_fd, &j->out);
  else if (fd == j->err_fd)
    drain (&j->err_fd, &j->err);
  else if (fd == j->pidfd && !j->exited)
    reap (j, WNOHANG);
  if (j->out.overflow && !j->exited)
    mcp_job_kill (j, SIGKILL);
  if (!j->exited)
    return false;
  /* What it wrote before exiting is in the pipes; a descendant that kept
   * them open does not hold the call up. */
  drain (&j->out_fd, &j->out);
  drain (&j->err_fd, &j->err);
  return true;
}

void
mcp_job_kill (struct mcp_job *j, int sig)
{
  if (j->pidfd >= 0 && !j->exited)
    syscall (SYS_pidfd_send_signal, j->pidfd, sig, NULL, 0);
}

void
mcp_job_finish (struct mcp_job *j, int timeout_ms)
{
  if (j->exited || j->pid <= 0)
    return;
  struct pollfd p = { .fd = j->pidfd, .events = POLLIN };
  int64_t deadline = sr_monotonic_ms () + timeout_ms;
  while (j->pidfd >= 0 && sr_monotonic_ms () < deadline)
    {
      /* keep the pipes flowing so the child is not blocked on a write */
      drain (&j->out_fd, &j->out);
      drain (&j->err_fd, &j->err);
      if (poll (&p, 1, 100) > 0)
        break;
    }
  reap (j, WNOHANG);
  if (!j->exited)
    {
      if (j->pidfd >= 0)
        mcp_job_kill (j, SIGKILL);
      else
        kill (j->pid, SIGKILL);
      reap (j, 0);
    }
}

void
mcp_job_free (struct mcp_job *j)
{
  if (j == NULL)
    return;
  sr_close (j->out_fd);
  sr_close (j->err_fd);
  sr_close (j->pidfd);
  if (j->tmpdir != NULL)
    mcp_rmtree (j->tmpdir);
  free (j->req_id);
  free (j->session);
  free (j->tmpdir);
  free (j->host_file);
  free (j->path);
  free (j->out.data);
  free (j->err.data);
  free (j);
}

static int
rm_one (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void) st, (void) ftw;
  if (flag == FTW_DP)
    rmdir (path);
  else
    unlink (path);
  return 0;
}

void
mcp_rmtree (const char *dir)
{
  nftw (dir, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}
