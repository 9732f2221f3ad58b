/* Stats from a cgroup v2 hierarchy, in v1's units (what runc reports). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "sandrun/util.h"

#define NSEC_PER_USEC 1000ull

static const sr_cg_kv *
kv_find (const sr_cg_kv *kv, size_t n, const char *key)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (kv[i].key, key) == 0)
      return &kv[i];
  return NULL;
}

int
sr_cg_v2_cpu_stats (int dirfd, sr_cgroup_stats *st, sr_error **err)
{
  sr_cg_kv *kv = NULL;
  size_t n = 0;
  if (sr_cg_read_kv_opt (dirfd, "cpu.stat", &kv, &n, err) < 0)
    return -1;
  st->cpu.total = sr_cg_kv_get (kv, n, "usage_usec") * NSEC_PER_USEC;
  st->cpu.user = sr_cg_kv_get (kv, n, "user_usec") * NSEC_PER_USEC;
  st->cpu.kernel = sr_cg_kv_get (kv, n, "system_usec") * NSEC_PER_USEC;
  /* Without the cpu controller there is no bandwidth control to report
   * (and a v1 cpu controller may have filled these in). */
  if (kv_find (kv, n, "nr_periods") != NULL)
    {
      st->cpu.periods = sr_cg_kv_get (kv, n, "nr_periods");
      st->cpu.throttled_periods = sr_cg_kv_get (kv, n, "nr_throttled");
      st->cpu.throttled_time
          = sr_cg_kv_get (kv, n, "throttled_usec") * NSEC_PER_USEC;
    }
  sr_cg_kv_free (kv, n);
  return 0;
}

int
sr_cg_v2_cpuset_stats (int dirfd, sr_cgroup_stats *st, sr_error **err)
{
  if (sr_cg_read_list_opt (dirfd, "cpuset.cpus.effective", true,
                           &st->cpuset.cpus, err) < 0
      || sr_cg_read_list_opt (dirfd, "cpuset.mems.effective", true,
                              &st->cpuset.mems, err) < 0)
    return -1;
  return 0;
}

/* current, peak, limit and the "max" events of memory.X or memory.swap.X;
 * 0 when there is no such counter. */
static int
memory_entry (int dirfd, const char *prefix, sr_cg_mem_entry *e, sr_error **err)
{
  _cleanup_free_ char *current = xasprintf ("memory.%scurrent", prefix);
  _cleanup_free_ char *peak = xasprintf ("memory.%speak", prefix);
  _cleanup_free_ char *max = xasprintf ("memory.%smax", prefix);
  _cleanup_free_ char *events = xasprintf ("memory.%sevents", prefix);
  sr_cg_kv *kv = NULL;
  size_t n = 0;
  _cleanup_free_ char *text = NULL;
  int r = sr_cg_read_opt (dirfd, current, &text, err);
  if (r <= 0)
    return r;
  unsigned long long usage;
  if (sr_parse_u64 (text, &usage) == 0)
    e->usage = usage;
  if (sr_cg_read_u64_opt (dirfd, peak, &e->max, err) < 0
      || sr_cg_read_u64_opt (dirfd, max, &e->limit, err) < 0
      || sr_cg_read_kv_opt (dirfd, events, &kv, &n, err) < 0)
    return -1;
  e->failcnt = sr_cg_kv_get (kv, n, "max");
  sr_cg_kv_free (kv, n);
  return 1;
}

int
sr_cg_v2_memory_usage (int dirfd, sr_cgroup_stats *st, sr_error **err)
{
  sr_cg_kv *ev = NULL;
  size_t n = 0;
  if (memory_entry (dirfd, "", &st->memory.usage, err) < 0
      || sr_cg_read_kv_opt (dirfd, "memory.events", &ev, &n, err) < 0)
    return -1;
  st->memory.low = sr_cg_kv_get (ev, n, "low");
  st->memory.high = sr_cg_kv_get (ev, n, "high");
  st->memory.max = sr_cg_kv_get (ev, n, "max");
  st->memory.oom = sr_cg_kv_get (ev, n, "oom");
  st->memory.oom_kill = sr_cg_kv_get (ev, n, "oom_kill");
  sr_cg_kv_free (ev, n);
  return 0;
}

int
sr_cg_v2_memory_stats (int dirfd, sr_cgroup_stats *st, sr_error **err)
{
  int swap;
  if (sr_cg_v2_memory_usage (dirfd, st, err) < 0
      || (swap = memory_entry (dirfd, "swap.", &st->memory.swap, err)) < 0
      || sr_cg_read_kv_opt (dirfd, "memory.stat", &st->memory.raw,
                            &st->memory.nraw, err) < 0)
    return -1;
  st->memory.cache = sr_cg_kv_get (st->memory.raw, st->memory.nraw, "file");
  /* v1's swap figures are memory+swap; runc reports v2's the same way. */
  sr_cg_mem_entry *sw = &st->memory.swap;
  if (swap == 0)
    return 0;
  sw->usage += st->memory.usage.usage;
  if (sw->limit != UINT64_MAX && st->memory.usage.limit != UINT64_MAX)
    sw->limit += st->memory.usage.limit;
  else
    sw->limit = UINT64_MAX;
  return 0;
}

/* "8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=5 dios=6" */
static int
io_line (const char *file, char *line, void *ctx, sr_error **err)
{
  static const struct
  {
    const char *key;
    enum sr_cg_blkio_stat list;
    const char *op;
  } keys[] = {
    { "rbytes", SR_BLKIO_SERVICE_BYTES, "Read" },
    { "wbytes", SR_BLKIO_SERVICE_BYTES, "Write" },
    { "rios", SR_BLKIO_SERVICED, "Read" },
    { "wios", SR_BLKIO_SERVICED, "Write" },
  };
  (void) file;
  (void) err;
  sr_cgroup_stats *st = ctx;
  unsigned long long major, minor;
  int used = 0;
  if (sscanf (line, "%llu:%llu%n", &major, &minor, &used) != 2)
    return 0;
  char *save = NULL;
  for (char *f = strtok_r (line + used, " ", &save); f != NULL;
       f = strtok_r (NULL, " ", &save))
    {
      char *eq = strchr (f, '=');
      unsigned long long v;
      if (eq == NULL)
        continue;
      *eq = '\0';
      for (size_t k = 0; k < ARRAY_SIZE (keys); k++)
        if (strcmp (f, keys[k].key) == 0 && sr_parse_u64 (eq + 1, &v) == 0)
          sr_cg_blkio_add (&st->blkio[keys[k].list], major, minor, keys[k].op,
                           v);
    }
  return 0;
}

int
sr_cg_v2_io_stats (int dirfd, sr_cgroup_stats *st, sr_error **err)
{
  return sr_cg_for_each_line_opt (dirfd, "io.stat", io_line, st, err) < 0 ? -1 : 0;
}

int
sr_cg_v2_hugetlb_stats (int dirfd, sr_cgroup_stats *st, sr_error **err)
{
  _cleanup_strv_ char **sizes = NULL;
  if (sr_cg_hugetlb_sizes (dirfd, ".max", &sizes, err) < 0)
    return -1;
  for (size_t i = 0; sizes != NULL && sizes[i] != NULL; i++)
    {
      _cleanup_free_ char *current = xasprintf ("hugetlb.%s.current", sizes[i]);
      _cleanup_free_ char *events = xasprintf ("hugetlb.%s.events", sizes[i]);
      sr_cg_hugetlb_stat h = { 0 };
      sr_cg_kv *kv = NULL;
      size_t n = 0;
      if (sr_cg_read_u64_opt (dirfd, current, &h.usage, err) < 0
          || sr_cg_read_kv_opt (dirfd, events, &kv, &n, err) < 0)
        return -1;
      h.failcnt = sr_cg_kv_get (kv, n, "max");
      sr_cg_kv_free (kv, n);
      h.page_size = xstrdup (sizes[i]);
      st->hugetlb = xrealloc (st->hugetlb, (st->nhugetlb + 1) * sizeof *st->hugetlb);
      st->hugetlb[st->nhugetlb++] = h;
    }
  return 0;
}
