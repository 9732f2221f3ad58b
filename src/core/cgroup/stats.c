/* Resource usage of a container's cgroup: each family is read from the
 * hierarchy that carries its controller, the v1 or the v2 way (on a hybrid
 * host memory may be v1 while hugetlb is v2).  Missing files and missing
 * controllers leave zeros, as with runc: stats are informative. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats.h"
#include "sandrun/util.h"

int
sr_cg_read_opt (int dirfd, const char *file, char **out, sr_error **err)
{
  sr_error *e = NULL;
  if (sr_cg_read (dirfd, file, out, &e) == 0)
    return 1;
  if (e->errnum == ENOENT)
    {
      sr_error_free (e);
      return 0;
    }
  *err = e;
  return -1;
}

static int
bad_value (const char *file, const char *text, sr_error **err)
{
  _cleanup_free_ char *shown = xstrndup (text, 64);
  return sr_fail (err, EINVAL, "cgroup \"%s\": unexpected value \"%s\"", file,
                  shown);
}

static int
parse_u64 (const char *file, const char *text, uint64_t *v, sr_error **err)
{
  unsigned long long u;
  if (strcmp (text, "max") == 0)
    *v = UINT64_MAX;
  else if (sr_parse_u64 (text, &u) == 0)
    *v = u;
  else
    return bad_value (file, text, err);
  return 0;
}

int
sr_cg_read_u64_opt (int dirfd, const char *file, uint64_t *v, sr_error **err)
{
  _cleanup_free_ char *text = NULL;
  int r = sr_cg_read_opt (dirfd, file, &text, err);
  if (r <= 0)
    return r;
  return parse_u64 (file, text, v, err);
}

static int
kv_cmp (const void *a, const void *b)
{
  return strcmp (((const sr_cg_kv *) a)->key, ((const sr_cg_kv *) b)->key);
}

int
sr_cg_for_each_line_opt (int dirfd, const char *file, sr_cg_line_fn fn,
                         void *ctx, sr_error **err)
{
  _cleanup_free_ char *text = NULL;
  int r = sr_cg_read_opt (dirfd, file, &text, err);
  if (r <= 0)
    return r;
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line != NULL;
       line = strtok_r (NULL, "\n", &save))
    if (fn (file, line, ctx, err) < 0)
      return -1;
  return 1;
}

struct kv_list
{
  sr_cg_kv *kv;
  size_t n;
};

static int
kv_line (const char *file, char *line, void *ctx, sr_error **err)
{
  struct kv_list *l = ctx;
  char *sp = strchr (line, ' ');
  uint64_t v = 0;
  if (sp == NULL)
    return 0;
  *sp = '\0';
  /* Signed counters exist (memory.stat of some kernels): clamp. */
  if (sp[1] != '-' && parse_u64 (file, sp + 1, &v, err) < 0)
    return -1;
  l->kv = xrealloc (l->kv, (l->n + 1) * sizeof *l->kv);
  l->kv[l->n++] = (sr_cg_kv){ xstrdup (line), v };
  return 0;
}

int
sr_cg_read_kv_opt (int dirfd, const char *file, sr_cg_kv **kv, size_t *n,
                   sr_error **err)
{
  struct kv_list l = { NULL, 0 };
  int r = sr_cg_for_each_line_opt (dirfd, file, kv_line, &l, err);
  if (r < 0)
    {
      sr_cg_kv_free (l.kv, l.n);
      l.kv = NULL;
      l.n = 0;
    }
  if (l.n > 0)
    qsort (l.kv, l.n, sizeof *l.kv, kv_cmp);
  *kv = l.kv;
  *n = l.n;
  return r;
}

uint64_t
sr_cg_kv_get (const sr_cg_kv *kv, size_t n, const char *key)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (kv[i].key, key) == 0)
      return kv[i].value;
  return 0;
}

void
sr_cg_kv_free (sr_cg_kv *kv, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (kv[i].key);
  free (kv);
}

void
sr_cg_u64_list_add (sr_cg_u64_list *l, uint64_t v)
{
  l->v = xrealloc (l->v, (l->n + 1) * sizeof *l->v);
  l->v[l->n++] = v;
}

/* A cpuset list expands to at most this many ids (runc keeps uint16s). */
#define MAX_IDS 65536

/* One token of a list: a number, or with `ranges` "LO-HI" too. */
static int
parse_list_token (char *tok, bool ranges, sr_cg_u64_list *out)
{
  char *dash = ranges ? strchr (tok, '-') : NULL;
  unsigned long long lo, hi;
  if (dash != NULL)
    *dash = '\0';
  if (sr_parse_u64 (tok, &lo) < 0)
    return -1;
  hi = lo;
  if (dash != NULL && sr_parse_u64 (dash + 1, &hi) < 0)
    return -1;
  if (hi < lo || (ranges && (hi >= MAX_IDS || out->n + (hi - lo) >= MAX_IDS)))
    return -1;
  for (unsigned long long i = lo; i <= hi; i++)
    sr_cg_u64_list_add (out, i);
  return 0;
}

int
sr_cg_read_list_opt (int dirfd, const char *file, bool ranges,
                     sr_cg_u64_list *out, sr_error **err)
{
  _cleanup_free_ char *text = NULL;
  int r = sr_cg_read_opt (dirfd, file, &text, err);
  if (r <= 0)
    return r;
  _cleanup_free_ char *copy = xstrdup (text);
  char *save = NULL;
  for (char *tok = strtok_r (copy, ranges ? ",\n" : " \t\n", &save);
       tok != NULL; tok = strtok_r (NULL, ranges ? ",\n" : " \t\n", &save))
    if (parse_list_token (tok, ranges, out) < 0)
      return bad_value (file, text, err);
  return 0;
}

void
sr_cg_blkio_add (sr_cg_blkio_list *l, uint64_t major, uint64_t minor,
                 const char *op, uint64_t value)
{
  l->v = xrealloc (l->v, (l->n + 1) * sizeof *l->v);
  l->v[l->n++] = (sr_cg_blkio_entry){ major, minor, xstrdup (op), value };
}

static int
str_cmp (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

int
sr_cg_hugetlb_sizes (int dirfd, const char *suffix, char ***sizes,
                     sr_error **err)
{
  *sizes = NULL;
  _cleanup_closedir_ DIR *dir = sr_cg_opendir (dirfd, err);
  if (dir == NULL)
    return -1;
  size_t sl = strlen (suffix);
  struct dirent *de;
  while ((de = readdir (dir)) != NULL)
    {
      const char *name = de->d_name;
      size_t len = strlen (name);
      /* Files only: a container with a writable cgroupfs names its
       * sub-cgroups as it likes. */
      if (de->d_type != DT_REG || !str_has_prefix (name, "hugetlb.")
          || len <= 8 + sl || strcmp (name + len - sl, suffix) != 0)
        continue;
      /* "hugetlb.2MB.max", not "hugetlb.2MB.rsvd.max" */
      _cleanup_free_ char *size = xstrndup (name + 8, len - 8 - sl);
      if (sr_cg_page_size_valid (size))
        strv_append (sizes, size);
    }
  if (*sizes != NULL)
    qsort (*sizes, strv_len (*sizes), sizeof (char *), str_cmp);
  return 0;
}

int
sr_cg_pids_stats (int dirfd, sr_cgroup_stats *st, sr_error **err)
{
  sr_cg_kv *ev = NULL;
  size_t n = 0;
  if (sr_cg_read_u64_opt (dirfd, "pids.current", &st->pids.current, err) < 0
      || sr_cg_read_u64_opt (dirfd, "pids.max", &st->pids.limit, err) < 0
      || sr_cg_read_kv_opt (dirfd, "pids.events", &ev, &n, err) < 0)
    return -1;
  st->pids.max_events = sr_cg_kv_get (ev, n, "max");
  sr_cg_kv_free (ev, n);
  if (st->pids.limit == UINT64_MAX)
    st->pids.limit = 0; /* runc: 0 is "no limit" */
  return 0;
}

typedef int (*stats_fn) (int dirfd, sr_cgroup_stats *st, sr_error **err);

struct family
{
  enum sr_cg_ctrl ctrl;
  stats_fn v1, v2;
};

static const struct family families[] = {
  { SR_CG_CPUACCT, sr_cg_v1_cpuacct_stats, NULL },
  { SR_CG_CPU, sr_cg_v1_cpu_stats, sr_cg_v2_cpu_stats },
  { SR_CG_CPUSET, sr_cg_v1_cpuset_stats, sr_cg_v2_cpuset_stats },
  { SR_CG_MEMORY, sr_cg_v1_memory_stats, sr_cg_v2_memory_stats },
  { SR_CG_PIDS, sr_cg_pids_stats, sr_cg_pids_stats },
  { SR_CG_BLKIO, sr_cg_v1_blkio_stats, sr_cg_v2_io_stats },
  { SR_CG_HUGETLB, sr_cg_v1_hugetlb_stats, sr_cg_v2_hugetlb_stats },
};

/* What sr_container_stats reports (CPU time, memory usage, peak and
 * events, pids): a dozen files instead of every controller's. */
static const struct family usage_families[] = {
  { SR_CG_CPUACCT, sr_cg_v1_cpuacct_usage, NULL },
  { SR_CG_CPU, NULL, sr_cg_v2_cpu_stats },
  { SR_CG_MEMORY, sr_cg_v1_memory_usage, sr_cg_v2_memory_usage },
  { SR_CG_PIDS, sr_cg_pids_stats, sr_cg_pids_stats },
};

static int
read_family (const sr_cgroup *cg, const struct family *f, sr_cgroup_stats *st,
             sr_error **err)
{
  const struct sr_cg_hier *h = sr_cg_find (cg, f->ctrl);
  if (h == NULL || h->fd < 0)
    return 0;
  stats_fn fn = h->v2 ? f->v2 : f->v1;
  if (fn != NULL && fn (h->fd, st, err) < 0)
    return sr_wrap (err, "cgroup %s \"%s\"", sr_cg_hier_name (h), h->path);
  return 0;
}

static int
read_families (const sr_cgroup *cg, const struct family *fs, size_t n,
               sr_cgroup_stats *st, sr_error **err)
{
  memset (st, 0, sizeof *st);
  for (size_t i = 0; i < n; i++)
    if (read_family (cg, &fs[i], st, err) < 0)
      {
        sr_cgroup_stats_clear (st);
        return -1;
      }
  /* cgroup2's cpu.stat has the usage even without the cpu controller: the
   * only CPU figures on a host whose v1 hierarchies lack cpuacct. */
  const struct sr_cg_hier *u = sr_cg_unified (cg);
  if (sr_cg_find (cg, SR_CG_CPUACCT) == NULL && sr_cg_find (cg, SR_CG_CPU) != u
      && u != NULL && u->fd >= 0 && sr_cg_v2_cpu_stats (u->fd, st, err) < 0)
    {
      sr_cgroup_stats_clear (st);
      return -1;
    }
  return 0;
}

int
sr_cgroup_read_stats (const sr_cgroup *cg, sr_cgroup_stats *st,
                      sr_error **err)
{
  return read_families (cg, families, ARRAY_SIZE (families), st, err);
}

int
sr_cgroup_read_usage (const sr_cgroup *cg, sr_cgroup_stats *st,
                      sr_error **err)
{
  return read_families (cg, usage_families, ARRAY_SIZE (usage_families), st,
                        err);
}

static void
blkio_list_clear (sr_cg_blkio_list *l)
{
  for (size_t i = 0; i < l->n; i++)
    free (l->v[i].op);
  free (l->v);
}

void
sr_cgroup_stats_clear (sr_cgroup_stats *st)
{
  free (st->cpu.percpu.v);
  free (st->cpu.percpu_kernel.v);
  free (st->cpu.percpu_user.v);
  free (st->cpuset.cpus.v);
  free (st->cpuset.mems.v);
  sr_cg_kv_free (st->memory.raw, st->memory.nraw);
  for (size_t i = 0; i < SR_BLKIO__COUNT; i++)
    blkio_list_clear (&st->blkio[i]);
  for (size_t i = 0; i < st->nhugetlb; i++)
    free (st->hugetlb[i].page_size);
  free (st->hugetlb);
  memset (st, 0, sizeof *st);
}
