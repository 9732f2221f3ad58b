/* Applying linux.resources: each resource family goes to the hierarchy
 * that carries its controller, and is written the v1 or v2 way depending
 * on that hierarchy (on a hybrid host, memory may be v1 while hugetlb is
 * v2).  A family the config asks for whose controller is missing is an
 * error naming both; one it does not ask for is skipped. */
#include <errno.h>
#include <inttypes.h>

#include "internal.h"
#include "resources.h"
#include "sandrun/util.h"

static bool
memory_requested (const oci_resources *r)
{
  const oci_memory *m = r->memory;
  return m != NULL
         && (m->limit.set || m->reservation.set || m->swap.set
             || m->kernel.set || m->kernel_tcp.set || m->swappiness.set
             || (m->disable_oom_killer.set && m->disable_oom_killer.value)
             || m->use_hierarchy.set);
}

static bool
cpu_requested (const oci_resources *r)
{
  const oci_cpu *c = r->cpu;
  return c != NULL
         && ((c->shares.set && c->shares.value) || (c->quota.set && c->quota.value)
             || (c->period.set && c->period.value) || c->burst.set
             || (c->realtime_runtime.set && c->realtime_runtime.value)
             || (c->realtime_period.set && c->realtime_period.value)
             || c->idle.set);
}

static bool
cpuset_requested (const oci_resources *r)
{
  const oci_cpu *c = r->cpu;
  return c != NULL
         && ((c->cpus != NULL && c->cpus[0]) || (c->mems != NULL && c->mems[0]));
}

static bool
pids_requested (const oci_resources *r)
{
  return r->pids != NULL && r->pids->limit.set && r->pids->limit.value != 0;
}

typedef int (*writer_fn) (int dirfd, const oci_resources *r, sr_error **err);

struct family
{
  enum sr_cg_ctrl ctrl;
  const char *what; /* the config's name for it */
  bool (*requested) (const oci_resources *r);
  writer_fn v1, v2; /* NULL: the version has no such thing */
};

static const struct family families[] = {
  { SR_CG_CPUSET, "cpu.cpus/mems", cpuset_requested, sr_cg_write_cpuset, sr_cg_write_cpuset },
  { SR_CG_MEMORY, "memory", memory_requested, sr_cg_v1_memory, sr_cg_v2_memory },
  { SR_CG_CPU, "cpu", cpu_requested, sr_cg_v1_cpu, sr_cg_v2_cpu },
  { SR_CG_PIDS, "pids", pids_requested, sr_cg_write_pids, sr_cg_write_pids },
};

static int
apply_family (const sr_cgroup *cg, const struct family *f,
              const oci_resources *r, sr_error **err)
{
  if (!f->requested (r))
    return 0;
  const struct sr_cg_hier *h = sr_cg_find (cg, f->ctrl);
  if (h == NULL)
    return sr_fail (err, ENOTSUP,
                    "cgroup: %s limits requested but the %s controller is "
                    "not available",
                    f->what, sr_cg_ctrl_name (f->ctrl, cg->layout == SR_CGROUP_V2));
  writer_fn write = h->v2 ? f->v2 : f->v1;
  if (write == NULL)
    return sr_fail (err, ENOTSUP, "cgroup: %s is not supported on cgroup %s",
                    f->what, h->v2 ? "v2" : "v1");
  if (h->fd < 0)
    return sr_fail (err, ENOENT, "cgroup \"%s%s\"", h->mnt, h->path);
  if (write (h->fd, r, err) < 0)
    return sr_wrap (err, "cgroup %s \"%s\"", h->key[0] ? h->key : "unified",
                    h->path);
  return 0;
}

int
sr_cg_apply_resources (const sr_cgroup *cg, const oci_resources *res,
                       sr_error **err)
{
  if (res == NULL)
    return 0;
  for (size_t i = 0; i < ARRAY_SIZE (families); i++)
    if (apply_family (cg, &families[i], res, err) < 0)
      return -1;
  return 0;
}

int
sr_cg_write_cpuset (int dirfd, const oci_resources *r, sr_error **err)
{
  const oci_cpu *c = r->cpu;
  if (c->cpus != NULL && c->cpus[0]
      && sr_cg_write (dirfd, "cpuset.cpus", c->cpus, err) < 0)
    return -1;
  if (c->mems != NULL && c->mems[0]
      && sr_cg_write (dirfd, "cpuset.mems", c->mems, err) < 0)
    return -1;
  return 0;
}

/* 0 is "unset" (runc); a negative limit is "max". */
int
sr_cg_write_pids (int dirfd, const oci_resources *r, sr_error **err)
{
  _cleanup_free_ char *value = sr_cg_v2_limit (r->pids->limit.value);
  return sr_cg_write (dirfd, "pids.max", value, err);
}

int
sr_cg_check_usage (int dirfd, const char *usage_file, int64_t limit,
                   sr_error **err)
{
  _cleanup_free_ char *text = NULL;
  long long usage;
  if (limit <= 0)
    return 0;
  if (sr_cg_read (dirfd, usage_file, &text, err) < 0)
    return -1;
  if (sr_parse_u64 (text, (unsigned long long *) &usage) < 0)
    return sr_fail (err, EINVAL, "cgroup: \"%s\": bad value \"%s\"",
                    usage_file, text);
  if (usage > limit)
    return sr_fail (err, EBUSY,
                    "memory limit %" PRId64 " is below the current usage %lld",
                    limit, usage);
  return 0;
}
