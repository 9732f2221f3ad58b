/* A container's resource usage as plain numbers, for a caller that acts on
 * them (the sandbox's receipt names the limit a run hit) rather than
 * printing runc's JSON (`events --stats`, which reads the same cgroup
 * files).  Works alike on cgroup v1, v2 and hybrid hosts; a figure the host
 * does not keep (no such controller, memory.peak before Linux 5.19) is 0. */
#ifndef SANDRUN_STATS_H
#define SANDRUN_STATS_H

#include <stdint.h>

#include "sandrun/container.h"
#include "sandrun/error.h"

struct sr_stats
{
  /* CPU time of every process the cgroup ever held. */
  uint64_t cpu_usec, cpu_user_usec, cpu_system_usec;

  uint64_t memory_bytes;       /* now */
  uint64_t memory_peak_bytes;  /* the most ever used */
  uint64_t memory_limit_bytes; /* 0: no limit */
  /* Times usage reached the limit (reclaim or an OOM followed): v2's
   * memory.events "max", v1's failcnt. */
  uint64_t memory_max_events;
  /* OOM situations (v2 "oom"; v1: 1 while under OOM) and processes the
   * OOM killer killed ("oom_kill", both versions). */
  uint64_t memory_oom_events;
  uint64_t memory_oom_kills;

  uint64_t pids_current;
  uint64_t pids_limit;      /* 0: no limit */
  uint64_t pids_max_events; /* forks refused at the limit (pids.events) */
};

/* The usage of container `id` (created, running or paused: its cgroup must
 * exist; a stopped one is "not running"). */
int sr_container_stats (const struct sr_globals *g, const char *id,
                        struct sr_stats *st, sr_error **err);

#endif
