/* Applying linux.resources: each resource family goes to the hierarchy
 * that carries its controller, and is written the v1 or v2 way depending
 * on that hierarchy (on a hybrid host, memory may be v1 while hugetlb is
 * v2).  A family the config asks for whose controller is missing is an
 * error naming both; one it does not ask for is skipped. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "internal.h"
#include "devices.h"
#include "resources.h"
#include "sandrun/log.h"
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

static bool
blkio_requested (const oci_resources *r)
{
  const oci_block_io *b = r->block_io;
  return b != NULL
         && ((b->weight.set && b->weight.value)
             || (b->leaf_weight.set && b->leaf_weight.value)
             || b->weight_device_len || b->throttle_read_bps_device_len
             || b->throttle_write_bps_device_len
             || b->throttle_read_iops_device_len
             || b->throttle_write_iops_device_len);
}

static bool
hugetlb_requested (const oci_resources *r)
{
  return r->hugepage_limits_len > 0;
}

static bool
net_cls_requested (const oci_resources *r)
{
  return r->network != NULL && r->network->class_id.set;
}

static bool
net_prio_requested (const oci_resources *r)
{
  return r->network != NULL && r->network->priorities_len > 0;
}

static bool
rdma_requested (const oci_resources *r)
{
  return r->rdma_len > 0;
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
  { SR_CG_BLKIO, "blockIO", blkio_requested, sr_cg_v1_blkio, sr_cg_v2_io },
  { SR_CG_HUGETLB, "hugepageLimits", hugetlb_requested, sr_cg_v1_hugetlb, sr_cg_v2_hugetlb },
  { SR_CG_NET_CLS, "network.classID", net_cls_requested, sr_cg_v1_net_cls, NULL },
  { SR_CG_NET_PRIO, "network.priorities", net_prio_requested, sr_cg_v1_net_prio, NULL },
  { SR_CG_RDMA, "rdma", rdma_requested, sr_cg_write_rdma, sr_cg_write_rdma },
};

static int
write_in (const struct sr_cg_hier *h, writer_fn write, const oci_resources *r,
          sr_error **err)
{
  if (h->fd < 0)
    return sr_fail (err, ENOENT, "cgroup \"%s%s\"", h->mnt, h->path);
  if (write (h->fd, r, err) < 0)
    return sr_wrap (err, "cgroup %s \"%s\"", sr_cg_hier_name (h), h->path);
  return 0;
}

static int
apply_family (const sr_cgroup *cg, const struct family *f,
              const oci_resources *r, sr_error **err)
{
  if (!f->requested (r))
    return 0;
  const struct sr_cg_hier *h = sr_cg_find (cg, f->ctrl);
  if (h == NULL && f->v2 == NULL && cg->layout == SR_CGROUP_V2)
    return sr_fail (err, ENOTSUP, "cgroup: %s is not supported on cgroup v2",
                    f->what);
  if (h == NULL)
    return sr_fail (err, ENOTSUP,
                    "cgroup: %s limits requested but the %s controller is "
                    "not available",
                    f->what, sr_cg_ctrl_name (f->ctrl, cg->layout == SR_CGROUP_V2));
  writer_fn write = h->v2 ? f->v2 : f->v1;
  if (write == NULL)
    return sr_fail (err, ENOTSUP, "cgroup: %s is not supported on cgroup %s",
                    f->what, h->v2 ? "v2" : "v1");
  return write_in (h, write, r, err);
}

unsigned
sr_cg_requested_ctrls (const oci_resources *r)
{
  unsigned bits = 0;
  if (r == NULL)
    return 0;
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
    if (families[i].requested (r))
      bits |= SR_CG_BIT (families[i].ctrl);
  for (size_t i = 0; i < r->unified.len; i++)
    {
      const char *key = r->unified.v[i].key;
      _cleanup_free_ char *prefix = xstrndup (key, strcspn (key, "."));
      int c = sr_cg_ctrl_from_name (prefix);
      if (c >= 0)
        bits |= SR_CG_BIT (c);
    }
  return bits;
}

/* "unified" goes last, so that it overrides what the families wrote. */
static int
apply_unified (const sr_cgroup *cg, const oci_resources *r, sr_error **err)
{
  if (r->unified.len == 0)
    return 0;
  const struct sr_cg_hier *h = sr_cg_unified (cg);
  if (h == NULL)
    return sr_fail (err, ENOTSUP,
                    "cgroup: unified resources need cgroup v2 (this host has "
                    "only v1)");
  return write_in (h, sr_cg_v2_unified, r, err);
}

bool
sr_cg_page_size_valid (const char *s)
{
  size_t digits = s ? strspn (s, "0123456789") : 0;
  return digits > 0 && strlen (s) == digits + 2
         && strchr ("KMG", s[digits]) != NULL && s[digits + 1] == 'B';
}

/* Page sizes become file names. */
static int
check_page_sizes (const oci_resources *r, sr_error **err)
{
  for (size_t i = 0; i < r->hugepage_limits_len; i++)
    {
      const char *s = r->hugepage_limits[i].page_size;
      if (!sr_cg_page_size_valid (s))
        return sr_fail (err, EINVAL,
                        "hugepageLimits: invalid page size \"%s\"", s ? s : "");
    }
  return 0;
}

int
sr_cg_apply_resources (const sr_cgroup *cg, const oci_resources *res,
                       sr_error **err)
{
  if (res == NULL)
    return 0;
  if (check_page_sizes (res, err) < 0)
    return -1;
  for (size_t i = 0; i < ARRAY_SIZE (families); i++)
    if (apply_family (cg, &families[i], res, err) < 0)
      return -1;
  return apply_unified (cg, res, err);
}

int
sr_cg_apply_devices (const sr_cgroup *cg, const oci_resources *res,
                     const oci_device *devs, size_t ndevs, sr_error **err)
{
  const struct sr_cg_hier *h = sr_cg_find (cg, SR_CG_DEVICES);
  if (h == NULL)
    h = sr_cg_unified (cg);
  if (h == NULL)
    {
      if (res != NULL && res->devices_len > 0)
        return sr_fail (err, ENOTSUP, "cgroup: devices rules requested but "
                        "the devices controller is not available");
      sr_warn ("cgroup: no devices controller: device access is not "
               "restricted");
      return 0;
    }
  if (h->fd < 0)
    return sr_fail (err, ENOENT, "cgroup \"%s%s\"", h->mnt, h->path);
  _cleanup_free_ struct sr_cg_dev_rule *rules = NULL;
  size_t n = 0;
  if (sr_cg_device_rules (res, devs, ndevs, &rules, &n, err) < 0)
    return -1;
  int r = h->v2 ? sr_cg_bpf_devices (h->fd, rules, n, err)
                : sr_cg_v1_devices (h->fd, rules, n, err);
  return r < 0 ? sr_wrap (err, "cgroup %s \"%s\"", sr_cg_hier_name (h), h->path) : 0;
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

void
sr_cg_throttle_lists (const oci_block_io *b, struct sr_cg_throttle out[4])
{
  out[0] = (struct sr_cg_throttle){ b->throttle_read_bps_device,
                                    b->throttle_read_bps_device_len };
  out[1] = (struct sr_cg_throttle){ b->throttle_write_bps_device,
                                    b->throttle_write_bps_device_len };
  out[2] = (struct sr_cg_throttle){ b->throttle_read_iops_device,
                                    b->throttle_read_iops_device_len };
  out[3] = (struct sr_cg_throttle){ b->throttle_write_iops_device,
                                    b->throttle_write_iops_device_len };
}

/* The same "DEVICE hca_handle=N hca_object=M" on v1 and v2. */
int
sr_cg_write_rdma (int dirfd, const oci_resources *r, sr_error **err)
{
  for (size_t i = 0; i < r->rdma_len; i++)
    {
      const oci_rdma *d = &r->rdma[i];
      if (d->device == NULL || d->device[0] == '\0'
          || d->device[strcspn (d->device, " \t\n")] != '\0')
        return sr_fail (err, EINVAL, "rdma: invalid device name \"%s\"",
                        d->device ? d->device : "");
      _cleanup_free_ char *handles
          = d->hca_handles.set ? xasprintf ("%" PRIu32, d->hca_handles.value)
                               : xstrdup ("max");
      _cleanup_free_ char *objects
          = d->hca_objects.set ? xasprintf ("%" PRIu32, d->hca_objects.value)
                               : xstrdup ("max");
      if (sr_cg_writef (dirfd, "rdma.max", err, "%s hca_handle=%s hca_object=%s",
                        d->device, handles, objects) < 0)
        return -1;
    }
  return 0;
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
