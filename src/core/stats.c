/* sr_container_stats: the figures of a container's cgroup (cgroup/stats.c
 * reads them, as for `events --stats`) in plain units. */
#include <errno.h>
#include <string.h>

#include "core/cgroup/cgroup_stats.h"
#include "sandrun/events.h"
#include "core/lifecycle.h"
#include "sandrun/stats.h"

#define NSEC_PER_USEC 1000u

/* v1 writes "no limit" as the largest page-aligned counter value, v2 as
 * "max" (read as UINT64_MAX): either is above this. */
#define NO_LIMIT_ABOVE (UINT64_C (1) << 62)

void
sr_stats_from_cgroup (const sr_cgroup_stats *cg, struct sr_stats *st)
{
  memset (st, 0, sizeof *st);
  st->cpu_usec = cg->cpu.total / NSEC_PER_USEC;
  st->cpu_user_usec = cg->cpu.user / NSEC_PER_USEC;
  st->cpu_system_usec = cg->cpu.kernel / NSEC_PER_USEC;
  st->memory_bytes = cg->memory.usage.usage;
  st->memory_peak_bytes = cg->memory.usage.max;
  st->memory_limit_bytes
      = cg->memory.usage.limit > NO_LIMIT_ABOVE ? 0 : cg->memory.usage.limit;
  st->memory_max_events = cg->memory.usage.failcnt;
  st->memory_oom_events = cg->memory.oom;
  st->memory_oom_kills = cg->memory.oom_kill;
  st->pids_current = cg->pids.current;
  st->pids_limit = cg->pids.limit;
  st->pids_max_events = cg->pids.max_events;
}

int
sr_container_open_cgroup (const struct sr_globals *g, const char *id,
                          sr_container *c, sr_cgroup **cg, sr_error **err)
{
  if (sr_container_load (g, id, false, c, err) < 0)
    return -1;
  if (c->status == SR_STATUS_STOPPED || c->rec.cgroup_path == NULL)
    return sr_fail (err, 0, "container with id %s is not running", id);
  return sr_cgroup_open (c->rec.cgroup_path, cg, err);
}

int
sr_container_stats (const struct sr_globals *g, const char *id,
                    struct sr_stats *st, sr_error **err)
{
  _cleanup_container_ sr_container c = SR_CONTAINER_INIT;
  _cleanup_cgroup_ sr_cgroup *cg = NULL;
  sr_cgroup_stats detail;
  /* A stopped container's cgroup stays until delete: its figures are what a
   * supervisor reports once the process ended (the sandbox's receipt). */
  if (sr_container_load (g, id, false, &c, err) < 0)
    return sr_wrap (err, "stats \"%s\"", id);
  if (c.rec.cgroup_path == NULL)
    return sr_fail (err, ENOENT, "stats \"%s\": no cgroup", id);
  if (sr_cgroup_open (c.rec.cgroup_path, &cg, err) < 0
      || sr_cgroup_read_usage (cg, &detail, err) < 0)
    return sr_wrap (err, "stats \"%s\"", id);
  sr_stats_from_cgroup (&detail, st);
  sr_cgroup_stats_clear (&detail);
  return 0;
}
