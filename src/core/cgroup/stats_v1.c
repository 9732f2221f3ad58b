/* Stats from cgroup v1 controllers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats.h"
#include "sandrun/util.h"

#define NSEC_PER_SEC 1000000000ull

/* cpuacct.usage_all: "cpu user system" then one line per CPU. */
static int
percpu_line (const char *file, char *line, void *ctx, sr_error **err)
{
  sr_cgroup_stats *st = ctx;
  unsigned long long cpu, user, sys;
  if (strncmp (line, "cpu ", 4) == 0)
    return 0; /* the header */
  if (sscanf (line, "%llu %llu %llu", &cpu, &user, &sys) != 3)
    return sr_fail (err, EINVAL, "cgroup \"%s\": unexpected line \"%.64s\"",
                    file, line);
  sr_cg_u64_list_add (&st->cpu.percpu_user, user);
  sr_cg_u64_list_add (&st->cpu.percpu_kernel, sys);
  return 0;
}

/* cpuacct.stat counts USER_HZ ticks. */
int
sr_cg_v1_cpuacct_usage (int dirfd, sr_cgroup_stats *st, sr_error **err)
{
  sr_cg_kv *kv = NULL;
  size_t n = 0;
  if (sr_cg_read_u64_opt (dirfd, "cpuacct.usage", &st->cpu.total, err) < 0
      || sr_cg_read_kv_opt (dirfd, "cpuacct.stat", &kv, &n, err) < 0)
    return -1;
  long hz = sysconf (_SC_CLK_TCK);
  uint64_t tick = hz > 0 ? NSEC_PER_SEC / (uint64_t) hz : NSEC_PER_SEC / 100;
  st->cpu.user = sr_cg_kv_get (kv, n, "user") * tick;
  st->cpu.kernel = sr_cg_kv_get (kv, n, "system") * tick;
  sr_cg_kv_free (kv, n);
  return 0;
}

int
sr_cg_v1_cpuacct_stats (int dirfd, sr_cgroup_stats *st, sr_error **err)
{
  if (sr_cg_v1_cpuacct_usage (dirfd, st, err) < 0
      || sr_cg_read_list_opt (dirfd, "cpuacct.usage_percpu", false,
                              &st->cpu.percpu, err) < 0
      || sr_cg_for_each_line_opt (dirfd, "cpuacct.usage_all", percpu_line, st,
                                  err) < 0)
    return -1;
  return 0;
}

int
sr_cg_v1_cpu_stats (int dirfd, sr_cgroup_stats *st, sr_error **err)
{
  sr_cg_kv *kv = NULL;
  size_t n = 0;
  if (sr_cg_read_kv_opt (dirfd, "cpu.stat", &kv, &n, err) < 0)
    return -1;
  st->cpu.periods = sr_cg_kv_get (kv, n, "nr_periods");
  st->cpu.throttled_periods = sr_cg_kv_get (kv, n, "nr_throttled");
  st->cpu.throttled_time = sr_cg_kv_get (kv, n, "throttled_time");
  sr_cg_kv_free (kv, n);
  return 0;
}

int
sr_cg_v1_cpuset_stats (int dirfd, sr_cgroup_stats *st, sr_error **err)
{
  const struct
  {
    const char *file;
    uint64_t *v;
  } flags[] = {
    { "cpuset.cpu_exclusive", &st->cpuset.cpu_exclusive },
    { "cpuset.mem_hardwall", &st->cpuset.mem_hardwall },
    { "cpuset.mem_exclusive", &st->cpuset.mem_exclusive },
    { "cpuset.memory_migrate", &st->cpuset.memory_migrate },
    { "cpuset.memory_spread_page", &st->cpuset.memory_spread_page },
    { "cpuset.memory_spread_slab", &st->cpuset.memory_spread_slab },
    { "cpuset.memory_pressure", &st->cpuset.memory_pressure },
    { "cpuset.sched_load_balance", &st->cpuset.sched_load_balance },
  };
  if (sr_cg_read_list_opt (dirfd, "cpuset.cpus", true, &st->cpuset.cpus, err) < 0
      || sr_cg_read_list_opt (dirfd, "cpuset.mems", true, &st->cpuset.mems, err) < 0)
    return -1;
  for (size_t i = 0; i < ARRAY_SIZE (flags); i++)
    if (sr_cg_read_u64_opt (dirfd, flags[i].file, flags[i].v, err) < 0)
      return -1;
  _cleanup_free_ char *level = NULL;
  int r = sr_cg_read_opt (dirfd, "cpuset.sched_relax_domain_level", &level, err);
  long v;
  if (r < 0)
    return -1;
  if (r > 0 && sr_parse_long (level, &v) == 0)
    st->cpuset.sched_relax_domain_level = v;
  return 0;
}

/* usage, max usage, failcnt and limit of one v1 memory counter ("" for
 * memory, "memsw.", "kmem.", "kmem.tcp."). */
static int
memory_entry (int dirfd, const char *prefix, sr_cg_mem_entry *e, sr_error **err)
{
  static const char *const names[4] = { "usage_in_bytes", "max_usage_in_bytes",
                                        "failcnt", "limit_in_bytes" };
  uint64_t *fields[4] = { &e->usage, &e->max, &e->failcnt, &e->limit };
  for (size_t i = 0; i < 4; i++)
    {
      _cleanup_free_ char *file = xasprintf ("memory.%s%s", prefix, names[i]);
      if (sr_cg_read_u64_opt (dirfd, file, fields[i], err) < 0)
        return -1;
    }
  return 0;
}

int
sr_cg_v1_memory_usage (int dirfd, sr_cgroup_stats *st, sr_error **err)
{
  sr_cg_kv *oom = NULL;
  size_t n = 0;
  if (memory_entry (dirfd, "", &st->memory.usage, err) < 0
      || sr_cg_read_kv_opt (dirfd, "memory.oom_control", &oom, &n, err) < 0)
    return -1;
  st->memory.oom = sr_cg_kv_get (oom, n, "under_oom");
  st->memory.oom_kill = sr_cg_kv_get (oom, n, "oom_kill");
  sr_cg_kv_free (oom, n);
  return 0;
}

int
sr_cg_v1_memory_stats (int dirfd, sr_cgroup_stats *st, sr_error **err)
{
  if (sr_cg_v1_memory_usage (dirfd, st, err) < 0
      || memory_entry (dirfd, "memsw.", &st->memory.swap, err) < 0
      || memory_entry (dirfd, "kmem.", &st->memory.kernel, err) < 0
      || memory_entry (dirfd, "kmem.tcp.", &st->memory.kernel_tcp, err) < 0
      || sr_cg_read_kv_opt (dirfd, "memory.stat", &st->memory.raw,
                            &st->memory.nraw, err) < 0)
    return -1;
  st->memory.cache = sr_cg_kv_get (st->memory.raw, st->memory.nraw, "cache");
  return 0;
}

/* "8:0 Read 4096" (or "8:0 4096" for time and sectors); "Total N" lines
 * are left out, as runc does. */
static int
blkio_line (const char *file, char *line, void *ctx, sr_error **err)
{
  (void) file;
  (void) err;
  unsigned long long major, minor, value;
  char op[16] = "";
  if (sscanf (line, "%llu:%llu %15s %llu", &major, &minor, op, &value) == 4
      || (op[0] = '\0', sscanf (line, "%llu:%llu %llu", &major, &minor, &value) == 3))
    sr_cg_blkio_add (ctx, major, minor, op, value);
  return 0;
}

/* The statistics of CFQ, else of BFQ, else of the throttling policy: the
 * first that has any entry. */
int
sr_cg_v1_blkio_stats (int dirfd, sr_cgroup_stats *st, sr_error **err)
{
  static const char *const sources[][SR_BLKIO__COUNT] = {
    { "blkio.io_service_bytes_recursive", "blkio.io_serviced_recursive",
      "blkio.io_queued_recursive", "blkio.io_service_time_recursive",
      "blkio.io_wait_time_recursive", "blkio.io_merged_recursive",
      "blkio.time_recursive", "blkio.sectors_recursive" },
    { "blkio.bfq.io_service_bytes_recursive", "blkio.bfq.io_serviced_recursive",
      "blkio.bfq.io_queued_recursive", "blkio.bfq.io_service_time_recursive",
      "blkio.bfq.io_wait_time_recursive", "blkio.bfq.io_merged_recursive",
      "blkio.bfq.time_recursive", "blkio.bfq.sectors_recursive" },
    { "blkio.throttle.io_service_bytes_recursive",
      "blkio.throttle.io_serviced_recursive" },
  };
  for (size_t s = 0; s < ARRAY_SIZE (sources); s++)
    {
      size_t found = 0;
      for (size_t i = 0; i < SR_BLKIO__COUNT; i++)
        {
          if (sources[s][i] == NULL)
            continue;
          if (sr_cg_for_each_line_opt (dirfd, sources[s][i], blkio_line,
                                       &st->blkio[i], err) < 0)
            return -1;
          found += st->blkio[i].n;
        }
      if (found > 0)
        return 0;
    }
  return 0;
}

int
sr_cg_v1_hugetlb_stats (int dirfd, sr_cgroup_stats *st, sr_error **err)
{
  _cleanup_strv_ char **sizes = NULL;
  if (sr_cg_hugetlb_sizes (dirfd, ".limit_in_bytes", &sizes, err) < 0)
    return -1;
  for (size_t i = 0; sizes != NULL && sizes[i] != NULL; i++)
    {
      sr_cg_hugetlb_stat h = { .page_size = sizes[i] };
      static const char *const names[3] = { "usage_in_bytes",
                                            "max_usage_in_bytes", "failcnt" };
      uint64_t *fields[3] = { &h.usage, &h.max, &h.failcnt };
      for (size_t k = 0; k < 3; k++)
        {
          _cleanup_free_ char *file = xasprintf ("hugetlb.%s.%s", sizes[i],
                                                 names[k]);
          if (sr_cg_read_u64_opt (dirfd, file, fields[k], err) < 0)
            return -1;
        }
      st->hugetlb = xrealloc (st->hugetlb, (st->nhugetlb + 1) * sizeof *st->hugetlb);
      h.page_size = xstrdup (sizes[i]);
      st->hugetlb[st->nhugetlb++] = h;
    }
  return 0;
}
