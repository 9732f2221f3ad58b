/* The one error type of sandrun: an errno value plus a message, chained with
 * context as it travels up ("create \"web\": mount \"/proc\": Permission denied"). */
#ifndef SANDRUN_ERROR_H
#define SANDRUN_ERROR_H

#include <stdarg.h>

typedef struct sr_error
{
  int errnum;  /* errno value of the root cause, 0 when there is none */
  char *msg;   /* full message, with ": strerror(errnum)" already appended */
} sr_error;

/* Fallible functions return an int (< 0 on failure) or a pointer (NULL on
 * failure) and take `sr_error **err` as their last argument.  On success *err
 * is left untouched.  All setters return -1 so that `return sr_fail (...)`
 * works. */

/* Set *err: the message is the formatted text, then ": strerror(errnum)" when
 * errnum != 0. */
int sr_fail (sr_error **err, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
int sr_failv (sr_error **err, int errnum, const char *fmt, va_list ap)
    __attribute__ ((format (printf, 3, 0)));

/* Prefix the existing error with context: "CONTEXT: old message". */
int sr_wrap (sr_error **err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

void sr_error_free (sr_error *e);
void sr_error_freep (sr_error **e);
#define _cleanup_error_ __attribute__ ((cleanup (sr_error_freep)))

/* Errno of an error, or EIO when it has none. */
int sr_error_errno (const sr_error *e);

#endif
