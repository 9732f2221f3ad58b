#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sandrun/log.h"
#include "sandrun/util.h"

static int log_fd = 2;
static bool log_json;
static bool log_debug;
/* Where log lines go instead of the log, in a child that has a parent to
 * tell (core/sync.c sets it: util knows nothing of the sync protocol). */
static sr_log_forward_fn forward_fn;
static void *forward_ctx;

static const char *const level_names[] = { "error", "warning", "info", "debug" };

int
sr_log_init (const char *path, bool json, bool debug, sr_error **err)
{
  log_json = json;
  log_debug = debug;
  if (path == NULL || *path == '\0')
    return 0;
  int fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return sr_fail (err, errno, "open log file \"%s\"", path);
  log_fd = fd;
  return 0;
}

int
sr_log_fd (void)
{
  return log_fd;
}

bool
sr_log_debug_enabled (void)
{
  return log_debug;
}

void
sr_log_set_forward (sr_log_forward_fn fn, void *ctx)
{
  forward_fn = fn;
  forward_ctx = ctx;
}

/* JSON string escaping for the few characters a log message can carry. */
static char *
json_escape (const char *s)
{
  size_t n = strlen (s);
  char *out = xmalloc (n * 6 + 1), *o = out;
  for (; *s; s++)
    {
      unsigned char c = (unsigned char) *s;
      if (c == '"' || c == '\\')
        {
          *o++ = '\\';
          *o++ = (char) c;
        }
      else if (c == '\n')
        o += sprintf (o, "\\n");
      else if (c < 0x20)
        o += sprintf (o, "\\u%04x", c);
      else
        *o++ = (char) c;
    }
  *o = '\0';
  return out;
}

static void
write_line (enum sr_log_level level, const char *msg)
{
  _cleanup_free_ char *line = NULL;

  if (log_json)
    {
      _cleanup_free_ char *esc = json_escape (msg);
      _cleanup_free_ char *stamp = sr_now_rfc3339 ();
      line = xasprintf ("{\"level\":\"%s\",\"msg\":\"%s\",\"time\":\"%s\"}\n",
                        level_names[level], esc, stamp);
    }
  else if (log_fd == 2)
    line = xasprintf ("sandrun: %s%s\n",
                      level == SR_LOG_ERROR ? "" : (level == SR_LOG_WARNING ? "warning: " : ""),
                      msg);
  else
    {
      time_t now = time (NULL);
      struct tm tm;
      char stamp[64];
      gmtime_r (&now, &tm);
      strftime (stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
      line = xasprintf ("%s %s: %s\n", stamp, level_names[level], msg);
    }
  (void) sr_write_all (log_fd, line, strlen (line));
}

void
sr_log_emit (enum sr_log_level level, const char *msg)
{
  if (level == SR_LOG_DEBUG && !log_debug)
    return;
  write_line (level, msg);
}

void
sr_log (enum sr_log_level level, const char *fmt, ...)
{
  va_list ap;
  int saved = errno;

  if (level == SR_LOG_DEBUG && !log_debug)
    return;
  va_start (ap, fmt);
  _cleanup_free_ char *msg = xvasprintf (fmt, ap);
  va_end (ap);

  if (forward_fn != NULL)
    forward_fn (forward_ctx, level, msg);
  else
    write_line (level, msg);
  errno = saved;
}

void
sr_log_fatal_error (const sr_error *e)
{
  const char *msg = e != NULL ? e->msg : "unknown error";
  /* Engines read the log file for the cause; people read stderr. */
  if (log_fd != 2)
    write_line (SR_LOG_ERROR, msg);
  fprintf (stderr, "sandrun: %s\n", msg);
}
