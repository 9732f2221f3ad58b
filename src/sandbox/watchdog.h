/* The watchdog: a small process forked before the sandbox is created that
 * outlives a SIGKILLed sandrun just long enough to kill the sandbox's
 * processes and remove its container and bundle.  It holds the bundle's and
 * the slot's locks meanwhile, so nothing reuses them too early. */
#ifndef SANDRUN_SANDBOX_WATCHDOG_H
#define SANDRUN_SANDBOX_WATCHDOG_H

#include <sys/types.h>

#include "bundle.h"
#include "sandrun/container.h"

struct sb_watchdog
{
  pid_t pid;
  int fd; /* our end of the socket */
};

#define SB_WATCHDOG_INIT                                                      \
  {                                                                           \
    .pid = -1, .fd = -1                                                       \
  }

int sb_watchdog_start (const struct sr_globals *g, const struct sb_bundle *b,
                       struct sb_watchdog *w, sr_error **err);
/* The sandbox's init exists: kill it if we die. */
void sb_watchdog_arm (struct sb_watchdog *w, pid_t init);
/* We clean up ourselves: the watchdog exits. */
void sb_watchdog_stop (struct sb_watchdog *w);

#endif
