/* What the sandbox's cgroup says it used, from the core's stats call. */
#ifndef SANDRUN_SANDBOX_STATS_H
#define SANDRUN_SANDBOX_STATS_H

#include "receipt.h"
#include "sandrun/container.h"

/* Fill what the host reports; what it cannot is left 0. */
void sb_stats_collect (const struct sr_globals *g, const char *id,
                       struct sb_usage *u);

/* Raise u->pids_peak to the number of processes now (sampled while a run
 * goes on: the cgroup keeps no peak). */
void sb_stats_sample_pids (const struct sr_globals *g, const char *id,
                           struct sb_usage *u);

#endif
