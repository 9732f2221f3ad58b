/* Signal names and numbers as kill(1) and runc accept them: "TERM", "SIGTERM",
 * "15", "RTMIN+3", "SIGRTMAX-2". */
#ifndef SANDRUN_SIGNALS_H
#define SANDRUN_SIGNALS_H

#include <stdint.h>

#include "sandrun/error.h"

/* Returns 0 and sets *signo, or -1 with "unknown signal \"NAME\"".  The
 * number 0 is taken (no signal, only the checks: runc and crun take it). */
int sr_signal_parse (const char *name, int *signo, sr_error **err);
/* "SIGTERM" for 15; NULL for an unknown number. */
const char *sr_signal_name (int signo);

/* Default disposition for every signal of `which` (bit N-1 for signal N),
 * and an empty signal mask: what a process the runtime starts (the init, an
 * exec'd process, a hook) must begin with, since an ignored signal survives
 * execve.  Async-signal-safe: for a child between fork and execve. */
void sr_signals_reset (uint64_t which);

#endif
