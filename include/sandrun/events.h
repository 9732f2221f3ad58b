/* `events`: a container's resource usage and OOM kills, one JSON object per
 * line in runc's shape:
 *   {"type":"stats","id":"ID","data":{"cpu":…,"memory":…,"pids":…,…}}
 *   {"type":"oom","id":"ID"} */
#ifndef SANDRUN_EVENTS_H
#define SANDRUN_EVENTS_H

#include <stdbool.h>
#include <stdio.h>

#include "sandrun/container.h"
#include "sandrun/error.h"

struct sr_events_opts
{
  unsigned long long interval_ms; /* between stats objects, > 0 */
  bool stats_only;                /* one stats object, then return */
};

/* Print the events of a running (or paused, or created) container to
 * `out`: with stats_only one stats object; else stats every interval and
 * an "oom" object for every OOM kill, until the container's init exits
 * (return 0) or SIGINT/SIGTERM arrives (return 0 too).  A stopped
 * container is an error ("container with id ID is not running"). */
int sr_container_events (const struct sr_globals *g, const char *id,
                         const struct sr_events_opts *opts, FILE *out,
                         sr_error **err);

#endif
