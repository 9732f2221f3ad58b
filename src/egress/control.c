/* The control socket.  Its end means stop (the sandbox is over).  A session
 * (docs/sessions.md) lives across executions, and each execution's receipt
 * names only the attempts made during it: an execution writes "mark TOKEN"
 * at its start and at its end, and the gateway answers with a mark line in
 * the log, {"mark":"TOKEN", the limits' state}, once the connections the
 * finished command closed are recorded.  The execution's attempts are the
 * lines between its two marks.  The answer goes to the log rather than the
 * socket: several executions hold the socket at once and would read each
 * other's answers. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress/gateway.h"
#include "sandrun/util.h"

static bool
token_ok (const char *t)
{
  size_t n = strlen (t);
  return n > 0 && n <= EG_MARK_TOKEN_MAX
         && strspn (t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                       "0123456789._-")
                == n;
}

static void
take_line (struct gateway *gw, const char *line)
{
  if (!str_has_prefix (line, "mark ") || !token_ok (line + 5))
    return; /* only sandrun writes here: nothing else is meaningful */
  if (gw->n_marks == EG_MARKS_MAX)
    eg_marks_flush (gw, true); /* answered early rather than never */
  if (gw->n_marks == 0)
    gw->marks_deadline = eg_now () + EG_MARK_SETTLE_MS;
  snprintf (gw->marks[gw->n_marks++], sizeof gw->marks[0], "%s", line + 5);
}

void
eg_control_readable (struct gateway *gw, int fd)
{
  size_t room = sizeof gw->ctl_buf - 1 - gw->ctl_len;
  ssize_t r = recv (fd, gw->ctl_buf + gw->ctl_len, room, MSG_DONTWAIT);
  if (r < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (r <= 0)
    {
      gw->stopping = true;
      return;
    }
  gw->ctl_len += (size_t) r;
  gw->ctl_buf[gw->ctl_len] = '\0';
  char *start = gw->ctl_buf, *nl;
  while ((nl = strchr (start, '\n')) != NULL)
    {
      *nl = '\0';
      take_line (gw, start);
      start = nl + 1;
    }
  gw->ctl_len -= (size_t) (start - gw->ctl_buf);
  memmove (gw->ctl_buf, start, gw->ctl_len);
  if (gw->ctl_len == sizeof gw->ctl_buf - 1)
    gw->ctl_len = 0; /* a line too long for a mark: dropped */
}

/* Every connection whose client finished (its command ended) has been
 * recorded: only the upstream's end was missing, which comes quickly. */
static bool
settled (struct gateway *gw)
{
  for (struct eg_conn *c = gw->conns; c != NULL; c = c->next)
    if (!c->closed && c->c_eof)
      return false;
  return true;
}

/* The loop's wait while marks are asked for: events already pending first
 * (timeout 0), then short waits until they settle. */
int
eg_marks_timeout (struct gateway *gw, int timeout)
{
  if (gw->n_marks == 0)
    return timeout;
  int t = settled (gw) ? 0 : 10;
  return timeout >= 0 && timeout < t ? timeout : t;
}

/* After a round of the loop: `idle` when it found no event (nothing was
 * pending).  The marks are written once that round settled, or at their
 * deadline whatever is still open. */
void
eg_marks_flush (struct gateway *gw, bool idle)
{
  if (gw->n_marks == 0)
    return;
  if (!(idle && settled (gw)) && eg_now () < gw->marks_deadline
      && gw->n_marks < EG_MARKS_MAX)
    return;
  for (size_t i = 0; i < gw->n_marks; i++)
    eg_record_mark (gw, gw->marks[i]);
  gw->n_marks = 0;
}
