#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandrun/error.h"
#include "sandrun/util.h"

int
sr_failv (sr_error **err, int errnum, const char *fmt, va_list ap)
{
  char *text = xvasprintf (fmt, ap);
  sr_error *e = xmalloc (sizeof *e);

  e->errnum = errnum;
  if (errnum != 0)
    {
      e->msg = xasprintf ("%s: %s", text, strerror (errnum));
      free (text);
    }
  else
    e->msg = text;

  if (err == NULL)
    {
      sr_error_free (e);
      return -1;
    }
  /* A second failure while one is pending keeps the first: it is the cause. */
  if (*err != NULL)
    sr_error_free (e);
  else
    *err = e;
  return -1;
}

int
sr_fail (sr_error **err, int errnum, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  sr_failv (err, errnum, fmt, ap);
  va_end (ap);
  return -1;
}

int
sr_wrap (sr_error **err, const char *fmt, ...)
{
  va_list ap;
  char *ctx;

  if (err == NULL || *err == NULL)
    return -1;
  va_start (ap, fmt);
  ctx = xvasprintf (fmt, ap);
  va_end (ap);

  char *msg = xasprintf ("%s: %s", ctx, (*err)->msg);
  free (ctx);
  free ((*err)->msg);
  (*err)->msg = msg;
  return -1;
}

void
sr_error_free (sr_error *e)
{
  if (e == NULL)
    return;
  free (e->msg);
  free (e);
}

void
sr_error_freep (sr_error **e)
{
  sr_error_free (*e);
  *e = NULL;
}

int
sr_error_errno (const sr_error *e)
{
  return (e != NULL && e->errnum != 0) ? e->errnum : EIO;
}
