/* Logging: to stderr, or to --log FILE in text or json (one object per line
 * with level, msg, time: what containerd's shim reads).  Inside the container
 * init, log lines are forwarded to the parent over the sync socket. */
#ifndef SANDRUN_LOG_H
#define SANDRUN_LOG_H

#include <stdbool.h>

#include "sandrun/error.h"

enum sr_log_level
{
  SR_LOG_ERROR = 0,
  SR_LOG_WARNING,
  SR_LOG_INFO,
  SR_LOG_DEBUG,
};

/* path NULL: stderr.  Returns < 0 when the file cannot be opened. */
int sr_log_init (const char *path, bool json, bool debug, sr_error **err);
void sr_log (enum sr_log_level level, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
bool sr_log_debug_enabled (void);
/* The fd log lines go to (2 for stderr). */
int sr_log_fd (void);

/* Child side: hand log lines to `fn` instead of writing them (NULL stops);
 * sr_log_set_forward_fd (sync.h) forwards them to the parent. */
typedef void (*sr_log_forward_fn) (void *ctx, enum sr_log_level level,
                                   const char *msg);
void sr_log_set_forward (sr_log_forward_fn fn, void *ctx);
/* Parent side: emit a line received from the child. */
void sr_log_emit (enum sr_log_level level, const char *msg);

/* The final error of a command: "sandrun: MSG" on stderr and, when --log is a
 * file, as an error entry there too. */
void sr_log_fatal_error (const sr_error *e);

#define sr_error_log(...) sr_log (SR_LOG_ERROR, __VA_ARGS__)
#define sr_warn(...) sr_log (SR_LOG_WARNING, __VA_ARGS__)
#define sr_info(...) sr_log (SR_LOG_INFO, __VA_ARGS__)
#define sr_debug(...)                                                         \
  do                                                                          \
    {                                                                         \
      if (sr_log_debug_enabled ())                                            \
        sr_log (SR_LOG_DEBUG, __VA_ARGS__);                                   \
    }                                                                         \
  while (0)

#endif
