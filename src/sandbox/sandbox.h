/* `sandrun sandbox`: one execution of untrusted code in an ephemeral,
 * locked-down container, ending in a receipt.  Built on the core's public
 * API (include/sandrun/) only. */
#ifndef SANDRUN_SANDBOX_SANDBOX_H
#define SANDRUN_SANDBOX_SANDBOX_H

#include "options.h"
#include "bundle.h"
#include "oci-spec/types.h"
#include "sandrun/container.h"
#include "sandrun/error.h"

/* The exit status when sandrun itself could not run the command. */
#define SB_EXIT_SANDRUN 125

/* Run `o` to its end and write its receipt: 0 with the command's status
 * (128+N for signal N) in *status, or -1 when sandrun could not run it
 * (nothing is left behind). */
int sb_run (const struct sr_globals *g, const struct sb_options *o,
            int *status, sr_error **err);

/* Create and start the container of bundle `b` with config *cfg (replaced
 * when the --workdir cannot be idmapped), its init on `stdio`: the init's
 * pid and a pidfd (our child, or grandchild when we are a subreaper). */
int sb_container_create (const struct sr_globals *g,
                         const struct sb_options *o, struct sb_bundle *b,
                         oci_config **cfg, const int stdio[3], pid_t *pid,
                         int *pidfd, sr_error **err);

#endif
