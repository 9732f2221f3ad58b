/* Signal names and numbers as kill(1) and runc accept them: "TERM", "SIGTERM",
 * "15", "RTMIN+3", "SIGRTMAX-2". */
#ifndef SANDRUN_SIGNALS_H
#define SANDRUN_SIGNALS_H

#include "sandrun/error.h"

/* Returns 0 and sets *signo, or -1 with "unknown signal \"NAME\"". */
int sr_signal_parse (const char *name, int *signo, sr_error **err);
/* "SIGTERM" for 15; NULL for an unknown number. */
const char *sr_signal_name (int signo);

#endif
