/* The supervisor (see supervisor.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "supervisor.h"
#include "sandrun/util.h"
#include "sandrun/wait.h"

/* After forwarding the caller's signal, how long the process may take to
 * end by itself before it is killed. */
#define STOP_GRACE_MS 1000
/* An interpreter interrupted at the timeout: the time its client has to
 * report, or to kill and restart it, before it is killed itself. */
#define KERNEL_GRACE_MS 10000
/* Reading what is left in the pipes once the process ended. */
#define DRAIN_MS 1000

void
sb_supervisor_block_signals (sigset_t *set, sigset_t *old)
{
  sigemptyset (set);
  sigaddset (set, SIGINT);
  sigaddset (set, SIGTERM);
  sigaddset (set, SIGHUP);
  sigprocmask (SIG_BLOCK, set, old);
}

void
sb_stream_clear (struct sb_stream *st)
{
  sr_close (st->fd);
  st->fd = -1;
  free (st->data);
  st->data = NULL;
}

static void
kill_process (struct sb_supervisor *s, int sig)
{
  if (s->kill != NULL)
    {
      s->kill (s, sig);
      return;
    }
  syscall (SYS_pidfd_send_signal, s->pidfd, sig, NULL, 0);
}

/* Read what is there; false once the stream is at EOF or over its limit. */
static bool
read_stream (struct sb_supervisor *s, struct sb_stream *st, bool *over)
{
  char buf[65536];
  ssize_t n = read (st->fd, buf, sizeof buf);

  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return true;
  if (n <= 0)
    {
      sr_close (st->fd);
      st->fd = -1;
      return false;
    }
  st->total += (uint64_t) n;
  size_t room = s->o->output_limit > st->len
                    ? (size_t) (s->o->output_limit - st->len)
                    : 0;
  size_t take = (size_t) n < room ? (size_t) n : room;
  if (take > 0)
    {
      st->data = xrealloc (st->data, st->len + take + 1);
      memcpy (st->data + st->len, buf, take);
      st->len += take;
      st->data[st->len] = '\0';
      /* The caller sees what the receipt has: no more. */
      if (st->copy_to >= 0)
        sr_write_all (st->copy_to, buf, take);
    }
  if (take < (size_t) n)
    {
      st->truncated = true;
      *over = true;
    }
  return true;
}

static int
poll_timeout (int64_t now, int64_t deadline)
{
  if (deadline < 0)
    return -1;
  return deadline > now ? (int) (deadline - now) : 0;
}

/* The caller's signal: forwarded, and the process killed if it does not
 * end within the grace period. */
static void
on_signal (struct sb_supervisor *s, struct sb_outcome *res, int64_t *kill_at)
{
  struct signalfd_siginfo si;
  if (read (s->sigfd, &si, sizeof si) != sizeof si)
    return;
  if (res->interrupted == 0)
    res->interrupted = (int) si.ssi_signo;
  kill_process (s, (int) si.ssi_signo);
  int64_t at = sr_monotonic_ms () + STOP_GRACE_MS;
  if (*kill_at < 0 || at < *kill_at)
    *kill_at = at;
}

static void
drain (struct sb_supervisor *s, struct sb_outcome *res)
{
  int64_t end = sr_monotonic_ms () + DRAIN_MS;
  bool over = false;

  while (s->out.fd >= 0 || s->err.fd >= 0)
    {
      struct pollfd p[2] = { { .fd = s->out.fd, .events = POLLIN },
                             { .fd = s->err.fd, .events = POLLIN } };
      int64_t now = sr_monotonic_ms ();
      if (now >= end || poll (p, 2, (int) (end - now)) <= 0)
        break;
      if (p[0].revents)
        read_stream (s, &s->out, &over);
      if (p[1].revents)
        read_stream (s, &s->err, &over);
    }
  if (over)
    res->output_exceeded = true;
}

void
sb_supervisor_reap (struct sb_supervisor *s, struct sb_outcome *res)
{
  struct sr_exit ex = { .code = -1, .signal = SIGKILL };
  _cleanup_error_ sr_error *err = NULL;

  if (s->wait_exit != NULL ? s->wait_exit (s, &ex) < 0
                           : sr_wait_exit (s->pidfd, -1, &ex, &err) < 0)
    ex = (struct sr_exit){ .code = -1, .signal = SIGKILL };
  res->exit_code = ex.code;
  res->signal = ex.signal;
  drain (s, res);
  res->duration_ms = sr_monotonic_ms () - s->started_ms;
}

void
sb_supervise (struct sb_supervisor *s, struct sb_outcome *res)
{
  int64_t deadline
      = s->o->timeout_ms > 0 ? s->started_ms + s->o->timeout_ms : -1;
  int64_t kill_at = -1;
  int64_t sample_at = s->sample != NULL ? s->started_ms + SB_SAMPLE_MS : -1;

  memset (res, 0, sizeof *res);
  for (;;)
    {
      struct pollfd p[4] = {
        { .fd = s->pidfd, .events = POLLIN },
        { .fd = s->sigfd, .events = POLLIN },
        { .fd = s->out.fd, .events = POLLIN },
        { .fd = s->err.fd, .events = POLLIN },
      };
      int64_t now = sr_monotonic_ms ();
      int64_t next = deadline;
      if (kill_at >= 0 && (next < 0 || kill_at < next))
        next = kill_at;
      if (sample_at >= 0 && (next < 0 || sample_at < next))
        next = sample_at;
      int n = poll (p, 4, poll_timeout (now, next));
      if (n < 0 && errno != EINTR)
        {
          kill_process (s, SIGKILL);
          break;
        }
      if (p[0].revents)
        break;
      bool over = false;
      if (p[1].revents)
        on_signal (s, res, &kill_at);
      if (p[2].revents)
        read_stream (s, &s->out, &over);
      if (p[3].revents)
        read_stream (s, &s->err, &over);
      now = sr_monotonic_ms ();
      if (sample_at >= 0 && now >= sample_at)
        {
          if (s->sample (s->sample_arg))
            {
              kill_process (s, SIGKILL);
              deadline = -1;
              sample_at = -1;
            }
          else
            sample_at = now + SB_SAMPLE_MS;
        }
      if (over && !res->output_exceeded)
        {
          res->output_exceeded = true;
          kill_process (s, SIGKILL);
          deadline = -1;
        }
      if (deadline >= 0 && now >= deadline && !res->timed_out)
        {
          res->timed_out = true;
          kill_process (s, s->interrupt_first ? SIGINT : SIGKILL);
          if (s->interrupt_first)
            kill_at = now + KERNEL_GRACE_MS;
          deadline = -1;
        }
      if (kill_at >= 0 && now >= kill_at)
        {
          kill_process (s, SIGKILL);
          kill_at = -1;
        }
    }
}

int
sb_outcome_status (const struct sb_outcome *res)
{
  if (res->interrupted != 0)
    return 128 + res->interrupted;
  if (res->signal != 0)
    return 128 + res->signal;
  return res->exit_code;
}

void
sb_supervisor_clear (struct sb_supervisor *s)
{
  sb_stream_clear (&s->out);
  sb_stream_clear (&s->err);
  sr_close (s->pidfd);
  sr_close (s->sigfd);
  s->pidfd = s->sigfd = -1;
}

bool
sb_outcome_start_failed (struct sb_outcome *res, int64_t started_ms,
                         sr_error **err)
{
  int e = sr_error_errno (*err);
  /* The command's own "exec" (a session's is wrapped in the container's). */
  const char *why = NULL;
  for (const char *p = strstr ((*err)->msg, "exec \""); p != NULL;
       p = strstr (p + 1, "exec \""))
    why = p;
  if ((e != ENOENT && e != EACCES && e != ENOEXEC) || why == NULL)
    return false;
  memset (res, 0, sizeof *res);
  res->exit_code = e == ENOENT ? 127 : 126;
  res->start_error = xstrdup (why);
  res->duration_ms = sr_monotonic_ms () - started_ms;
  sr_error_free (*err);
  *err = NULL;
  return true;
}
