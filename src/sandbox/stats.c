/* The sandbox's usage from the core's stats (see stats.h). */
#include <string.h>

#include "sandrun/log.h"
#include "stats.h"
#include "sandrun/stats.h"

void
sb_stats_collect (const struct sr_globals *g, const char *id,
                  struct sb_usage *u)
{
  struct sr_stats st;
  sr_error *err = NULL;

  memset (&st, 0, sizeof st);
  if (sr_container_stats (g, id, &st, &err) < 0)
    {
      sr_log (SR_LOG_DEBUG, "sandbox: stats: %s", err->msg);
      sr_error_free (err);
      return;
    }
  u->cpu_user_us = st.cpu_user_usec;
  u->cpu_system_us = st.cpu_system_usec;
  u->peak_memory_bytes = st.memory_peak_bytes;
  u->oom_kills = st.memory_oom_kills;
  u->memory_max_events = st.memory_max_events;
  u->pids_max_events = st.pids_max_events;
  if (st.pids_current > u->pids_peak)
    u->pids_peak = st.pids_current;
}

void
sb_stats_sample_pids (const struct sr_globals *g, const char *id,
                      struct sb_usage *u)
{
  struct sb_usage now = { 0 };
  sb_stats_collect (g, id, &now);
  if (now.pids_peak > u->pids_peak)
    u->pids_peak = now.pids_peak;
}
