/* One execution's share of its session's egress gateway record (see
 * session_egress.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "session_egress.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

/* How long a mark may take: the gateway answers within 1 s (it waits at
 * most that for finished connections); more means it is gone or stuck. */
#define MARK_WAIT_MS 5000
/* The part of the log one execution reads, at most. */
#define WINDOW_MAX (16u << 20)

static int
take_fd (const struct sb_session *s, int fd, int *out, sr_error **err)
{
  *out = (int) syscall (SYS_pidfd_getfd, s->pidfd, fd, 0);
  if (*out < 0)
    return sr_fail (err, errno,
                    "session \"%s\": take its egress gateway's fd %d from "
                    "the supervisor",
                    s->name, fd);
  return 0;
}

/* The log from `from` to its end, NUL-terminated (pread: the description
 * and its offset are shared with the gateway, which appends). */
static char *
read_from (int fd, off_t from)
{
  struct stat st;
  if (fstat (fd, &st) < 0 || st.st_size < from
      || (size_t) (st.st_size - from) > WINDOW_MAX)
    return NULL;
  size_t len = (size_t) (st.st_size - from), got = 0;
  char *buf = xmalloc (len + 1);
  while (got < len)
    {
      ssize_t r = pread (fd, buf + got, len - got, from + (off_t) got);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      got += (size_t) r;
    }
  buf[got] = '\0';
  return buf;
}

/* Ask for the mark `token` and wait for its line; the attempts from `from`
 * to it go into `into`.  The log's offset past the line, or -1. */
static off_t
mark (struct sb_session_egress *se, const char *token, off_t from,
      struct sb_egress *into)
{
  _cleanup_free_ char *req = xasprintf ("mark %s\n", token);
  _cleanup_free_ char *needle = xasprintf ("\"mark\":\"%s\"", token);
  if (send (se->control_fd, req, strlen (req), MSG_NOSIGNAL)
      != (ssize_t) strlen (req))
    return -1;
  int64_t deadline = sr_monotonic_ms () + MARK_WAIT_MS;
  long pause_us = 100;
  for (;;)
    {
      _cleanup_free_ char *buf = read_from (se->log_fd, from);
      if (buf == NULL)
        return -1;
      if (strstr (buf, needle) != NULL)
        {
          ssize_t n = sb_egress_take_record (into, buf, token);
          if (n >= 0)
            return from + (off_t) n;
          sb_egress_clear (into); /* its line is not whole yet */
        }
      if (sr_monotonic_ms () >= deadline)
        return -1;
      /* the log is a memfd: nothing to wait on but time */
      struct timespec ts = { 0, pause_us * 1000 };
      nanosleep (&ts, NULL);
      pause_us = pause_us < 10000 ? pause_us * 2 : pause_us;
    }
}

static off_t
log_size (int fd)
{
  struct stat st;
  return fstat (fd, &st) == 0 ? st.st_size : -1;
}

int
sb_session_egress_begin (const struct sb_session *s,
                         struct sb_session_egress *se, sr_error **err)
{
  if (s->egress_control_fd < 0 || s->egress_log_fd < 0)
    return 0;
  se->on = true;
  if (take_fd (s, s->egress_control_fd, &se->control_fd, err) < 0
      || take_fd (s, s->egress_log_fd, &se->log_fd, err) < 0)
    return -1;
  /* unique among the session's executions: pid and time */
  snprintf (se->token, sizeof se->token, "%d-%lld", (int) getpid (),
            (long long) sr_monotonic_ms ());
  _cleanup_free_ char *first = xasprintf ("%s-start", se->token);
  off_t from = log_size (se->log_fd);
  se->start = from < 0 ? -1 : mark (se, first, from, &se->at_start);
  if (se->start < 0)
    sr_log (SR_LOG_WARNING,
            "session \"%s\": the egress gateway did not answer: this "
            "execution's network record will be empty",
            s->name);
  return 0;
}

void
sb_session_egress_end (const struct sb_session *s,
                       struct sb_session_egress *se)
{
  if (!se->on)
    return;
  _cleanup_free_ char *last = xasprintf ("%s-end", se->token);
  if (se->start < 0 || mark (se, last, se->start, &se->eg) < 0)
    {
      if (se->start >= 0)
        sr_log (SR_LOG_WARNING,
                "session \"%s\": the egress gateway did not answer: this "
                "execution's network record is incomplete",
                s->name);
      se->eg.incomplete = true;
      return;
    }
  /* The limits are the session's: an execution is named for one only when
   * it was reached during it. */
  se->eg.bytes_limit_hit
      = se->eg.bytes_limit_hit && !se->at_start.bytes_limit_hit;
  se->eg.connections_limit_hit
      = se->eg.connections_limit_hit && !se->at_start.connections_limit_hit;
  se->eg.incomplete
      = se->eg.incomplete || se->eg.unrecorded > se->at_start.unrecorded;
}

const struct sb_egress *
sb_session_egress_record (const struct sb_session_egress *se)
{
  return se->on ? &se->eg : NULL;
}

void
sb_session_egress_clear (struct sb_session_egress *se)
{
  sr_close (se->control_fd);
  sr_close (se->log_fd);
  sb_egress_clear (&se->at_start);
  sb_egress_clear (&se->eg);
  *se = (struct sb_session_egress) SB_SESSION_EGRESS_INIT;
}
