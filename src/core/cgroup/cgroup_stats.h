/* What a container's cgroup reports: resource usage (`events`, `events
 * --stats`) and OOM kills as they happen.  The fields follow runc's
 * libcontainer stats, so that `events` can print runc's JSON; a controller
 * the host lacks leaves its fields 0.  Values are converted to v1's units
 * on cgroup v2 (nanoseconds for CPU time, memory+swap for swap). */
#ifndef SANDRUN_CGROUP_STATS_H
#define SANDRUN_CGROUP_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cgroup/cgroup.h"
#include "sandrun/error.h"

typedef struct
{
  uint64_t *v;
  size_t n;
} sr_cg_u64_list;

typedef struct
{
  uint64_t limit, usage, max, failcnt;
} sr_cg_mem_entry;

typedef struct
{
  char *key;
  uint64_t value;
} sr_cg_kv;

typedef struct
{
  uint64_t major, minor;
  char *op; /* "Read", "Write", "Sync", "Async", "Discard", "Total" */
  uint64_t value;
} sr_cg_blkio_entry;

typedef struct
{
  sr_cg_blkio_entry *v;
  size_t n;
} sr_cg_blkio_list;

enum sr_cg_blkio_stat
{
  SR_BLKIO_SERVICE_BYTES,
  SR_BLKIO_SERVICED,
  SR_BLKIO_QUEUED,
  SR_BLKIO_SERVICE_TIME,
  SR_BLKIO_WAIT_TIME,
  SR_BLKIO_MERGED,
  SR_BLKIO_TIME,
  SR_BLKIO_SECTORS,
  SR_BLKIO__COUNT
};

typedef struct
{
  char *page_size; /* "2MB", "1GB" */
  uint64_t usage, max, failcnt;
} sr_cg_hugetlb_stat;

typedef struct
{
  struct
  {
    uint64_t total, kernel, user; /* ns */
    sr_cg_u64_list percpu, percpu_kernel, percpu_user;
    uint64_t periods, throttled_periods, throttled_time;
  } cpu;
  struct
  {
    sr_cg_u64_list cpus, mems;
    uint64_t cpu_exclusive, mem_hardwall, mem_exclusive, memory_migrate,
        memory_spread_page, memory_spread_slab, memory_pressure,
        sched_load_balance;
    int64_t sched_relax_domain_level;
  } cpuset;
  struct
  {
    uint64_t cache;
    sr_cg_mem_entry usage, swap, kernel, kernel_tcp;
    sr_cg_kv *raw; /* memory.stat */
    size_t nraw;
    /* memory.events (v2); on v1 oom_kill from memory.oom_control and oom
     * from its under_oom */
    uint64_t low, high, max, oom, oom_kill;
  } memory;
  struct
  {
    uint64_t current, limit; /* limit 0: none */
    uint64_t max_events;     /* pids.events "max": forks refused */
  } pids;
  sr_cg_blkio_list blkio[SR_BLKIO__COUNT];
  sr_cg_hugetlb_stat *hugetlb;
  size_t nhugetlb;
} sr_cgroup_stats;

/* Fill `st` (zeroed first) from every hierarchy of the cgroup. */
int sr_cgroup_read_stats (const sr_cgroup *cg, sr_cgroup_stats *st,
                          sr_error **err);
/* Only what struct sr_stats holds (CPU time, memory usage, peak and
 * events, pids): what a supervisor reads before and after every run. */
int sr_cgroup_read_usage (const sr_cgroup *cg, sr_cgroup_stats *st,
                          sr_error **err);
void sr_cgroup_stats_clear (sr_cgroup_stats *st);

/* The stats object of `events` (one line, with its newline), malloc'd
 * (events.c). */
char *sr_events_stats_json (const char *id, const sr_cgroup_stats *st);

struct sr_stats;
/* The figures of sr_container_stats (stats.h), from what was read. */
void sr_stats_from_cgroup (const sr_cgroup_stats *cg, struct sr_stats *st);

/* ---- OOM notification --------------------------------------------------- */

/* v2: inotify on memory.events; v1: an eventfd registered for
 * memory.oom_control in cgroup.event_control. */
typedef struct sr_cgroup_oom sr_cgroup_oom;

/* Start watching; the counters read now are the baseline.  ENOTSUP when
 * the host has no memory controller. */
int sr_cgroup_oom_watch (const sr_cgroup *cg, sr_cgroup_oom **out,
                         sr_error **err);
/* Becomes readable (POLLIN) when something may have happened. */
int sr_cgroup_oom_fd (const sr_cgroup_oom *w);
/* Drain the fd and count the OOM kills since the last call (or the
 * baseline).  A cgroup that is gone counts nothing and sets *gone. */
int sr_cgroup_oom_count (sr_cgroup_oom *w, uint64_t *n, bool *gone,
                         sr_error **err);
void sr_cgroup_oom_free (sr_cgroup_oom *w);

#endif
