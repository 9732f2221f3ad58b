/* The server's loop: stdin, the executions' pipes and pidfds, and the
 * signals that end it.  At the end (EOF on stdin, as the MCP stdio
 * transport's shutdown says, or SIGINT/SIGTERM/SIGHUP) every running
 * execution is stopped and every session this server started is stopped,
 * so a client that goes away leaves no sandbox behind. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "mcp.h"
#include "sandrun/jsongen.h"
#include "sandrun/util.h"

#define MAX_LINE (32 * 1024 * 1024)
#define STOP_GRACE_MS 10000

struct input
{
  char *buf;
  size_t len, cap;
  bool skipping; /* an over-long line, dropped up to its newline */
  bool eof;
};

static void
finish_job (struct mcp_server *s, struct mcp_job *j)
{
  for (struct mcp_job **p = &s->jobs; *p != NULL; p = &(*p)->next)
    if (*p == j)
      {
        *p = j->next;
        break;
      }
  s->n_jobs--;
  if (!j->cancelled) /* a cancelled request gets no response */
    mcp_send_result (s, j);
  mcp_job_free (j);
}

static void
take_lines (struct mcp_server *s, struct input *in)
{
  size_t start = 0;
  for (;;)
    {
      char *nl = memchr (in->buf + start, '\n', in->len - start);
      if (nl == NULL)
        break;
      size_t n = (size_t) (nl - (in->buf + start));
      if (!in->skipping)
        mcp_handle_line (s, in->buf + start, n);
      in->skipping = false;
      start += n + 1;
    }
  memmove (in->buf, in->buf + start, in->len - start);
  in->len -= start;
  if (in->len > MAX_LINE)
    {
      if (!in->skipping)
        mcp_send_error (s, NULL, false, -32700,
                        "the message is larger than 32 MiB");
      in->skipping = true;
      in->len = 0;
    }
}

static void
read_input (struct mcp_server *s, struct input *in)
{
  if (in->cap - in->len < 65536)
    {
      in->cap = in->cap * 2 + 65536;
      in->buf = xrealloc (in->buf, in->cap);
    }
  ssize_t n = read (0, in->buf + in->len, in->cap - in->len);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (n <= 0)
    {
      /* a last message without its newline still counts */
      if (in->len > 0 && !in->skipping)
        mcp_handle_line (s, in->buf, in->len);
      in->eof = true;
      return;
    }
  in->len += (size_t) n;
  take_lines (s, in);
}

/* Everything this server started ends with it. */
static void
stop_all (struct mcp_server *s)
{
  for (struct mcp_job *j = s->jobs; j != NULL; j = j->next)
    {
      j->cancelled = true;
      mcp_job_kill (j, SIGTERM);
    }
  while (s->jobs != NULL)
    {
      struct mcp_job *j = s->jobs;
      mcp_job_finish (j, STOP_GRACE_MS);
      s->jobs = j->next;
      mcp_job_free (j);
    }
  s->n_jobs = 0;
  for (size_t i = 0; s->sessions[i] != NULL; i++)
    {
      char *argv[]
          = { "sandrun",      "--root", (char *) s->root, "sandbox", "stop",
              s->sessions[i], NULL };
      char *argv_noroot[]
          = { "sandrun", "sandbox", "stop", s->sessions[i], NULL };
      struct mcp_job j = { .pidfd = -1,
                           .out_fd = -1,
                           .err_fd = -1,
                           .out.max = 65536,
                           .err.max = 65536 };
      _cleanup_error_ sr_error *err = NULL;
      if (mcp_job_spawn (&j, s->runtime, s->root ? argv : argv_noroot, &err)
          == 0)
        mcp_job_finish (&j, STOP_GRACE_MS);
      sr_close (j.out_fd);
      sr_close (j.err_fd);
      sr_close (j.pidfd);
      free (j.out.data);
      free (j.err.data);
    }
}

static int
add (struct pollfd *p, int *n, int fd)
{
  if (fd >= 0)
    p[(*n)++] = (struct pollfd){ .fd = fd, .events = POLLIN };
  return fd;
}

/* One round of poll over stdin, the signals and the jobs; false to end. */
static bool
round_ (struct mcp_server *s, struct input *in, int sfd)
{
  struct pollfd p[2 + 3 * MCP_MAX_JOBS];
  int n = 0;
  if (!in->eof)
    add (p, &n, 0);
  add (p, &n, sfd);
  for (struct mcp_job *j = s->jobs; j != NULL && n + 3 <= (int) ARRAY_SIZE (p);
       j = j->next)
    {
      add (p, &n, j->out_fd);
      add (p, &n, j->err_fd);
      if (!j->exited)
        add (p, &n, j->pidfd);
    }
  if (poll (p, n, -1) < 0)
    return errno == EINTR;
  for (int i = 0; i < n; i++)
    {
      if (p[i].revents == 0)
        continue;
      if (p[i].fd == sfd)
        return false;
      if (p[i].fd == 0)
        {
          read_input (s, in);
          continue;
        }
      for (struct mcp_job *j = s->jobs; j != NULL; j = j->next)
        if (p[i].fd == j->out_fd || p[i].fd == j->err_fd
            || p[i].fd == j->pidfd)
          {
            if (mcp_job_pump (j, p[i].fd))
              finish_job (s, j);
            break;
          }
    }
  return !in->eof && s->out_fd >= 0;
}

int
mcp_serve (struct mcp_server *s, sr_error **err)
{
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGHUP);
  signal (SIGPIPE, SIG_IGN);
  if (sigprocmask (SIG_BLOCK, &set, NULL) < 0)
    return sr_fail (err, errno, "mcp: block signals");
  _cleanup_close_ int sfd = signalfd (-1, &set, SFD_CLOEXEC);
  if (sfd < 0)
    return sr_fail (err, errno, "mcp: signalfd");
  struct input in = { 0 };
  while (round_ (s, &in, sfd))
    ;
  free (in.buf);
  stop_all (s);
  return 0;
}
