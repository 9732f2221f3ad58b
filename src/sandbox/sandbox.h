/* `sandrun sandbox`: one execution of untrusted code in an ephemeral,
 * locked-down container, ending in a receipt.  Built on the core's public
 * API (include/sandrun/) only. */
#ifndef SANDRUN_SANDBOX_SANDBOX_H
#define SANDRUN_SANDBOX_SANDBOX_H

#include "options.h"
#include "sandrun/container.h"
#include "sandrun/error.h"

/* The exit status when sandrun itself could not run the command. */
#define SB_EXIT_SANDRUN 125

/* Run `o` to its end and write its receipt: 0 with the command's status
 * (128+N for signal N) in *status, or -1 when sandrun could not run it
 * (nothing is left behind). */
int sb_run (const struct sr_globals *g, const struct sb_options *o,
            int *status, sr_error **err);

#endif
