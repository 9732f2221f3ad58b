/* Writing resources to cgroup v1 controllers. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <unistd.h>

#include "resources.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

#define MEMSW "memory.memsw.limit_in_bytes"

static bool
opt_nonzero_i64 (oci_opt_i64 v)
{
  return v.set && v.value != 0;
}

static int
write_i64 (int dirfd, const char *file, int64_t v, sr_error **err)
{
  return sr_cg_writef (dirfd, file, err, "%" PRId64, v);
}

/* v1 wants memsw >= limit at every moment: when the limit grows (or
 * becomes unlimited), raise memsw first; when it shrinks, lower it last. */
static int
memory_limit_and_swap (int dirfd, const oci_memory *m, sr_error **err)
{
  bool limit = opt_nonzero_i64 (m->limit);
  bool swap = opt_nonzero_i64 (m->swap);
  if (swap && faccessat (dirfd, MEMSW, F_OK, 0) < 0 && errno == ENOENT)
    {
      if (m->swap.value != -1)
        return sr_fail (err, ENOTSUP, "memory.swap %" PRId64 ": swap "
                        "accounting is not enabled in this kernel",
                        m->swap.value);
      swap = false;
    }
  bool swap_first = swap && !limit;
  if (swap && limit)
    {
      _cleanup_free_ char *cur = NULL;
      long long current;
      if (sr_cg_read (dirfd, "memory.limit_in_bytes", &cur, err) < 0)
        return -1;
      swap_first = m->limit.value == -1
                   || (sr_parse_u64 (cur, (unsigned long long *) &current) == 0
                       && current >= 0 && m->limit.value > current);
    }
  if (swap_first && write_i64 (dirfd, MEMSW, m->swap.value, err) < 0)
    return -1;
  if (limit && write_i64 (dirfd, "memory.limit_in_bytes", m->limit.value, err) < 0)
    return -1;
  if (swap && !swap_first && write_i64 (dirfd, MEMSW, m->swap.value, err) < 0)
    return -1;
  return 0;
}

static int
memory_kernel (int dirfd, const oci_memory *m, sr_error **err)
{
  if (opt_nonzero_i64 (m->kernel))
    sr_warn ("memory.kernel is ignored: kernel memory limits are deprecated");
  if (!opt_nonzero_i64 (m->kernel_tcp))
    return 0;
  if (faccessat (dirfd, "memory.kmem.tcp.limit_in_bytes", F_OK, 0) < 0)
    {
      sr_warn ("memory.kernelTCP is ignored: this kernel has no "
               "memory.kmem.tcp.limit_in_bytes");
      return 0;
    }
  return write_i64 (dirfd, "memory.kmem.tcp.limit_in_bytes",
                    m->kernel_tcp.value, err);
}

int
sr_cg_v1_memory (int dirfd, const oci_resources *r, sr_error **err)
{
  const oci_memory *m = r->memory;
  if (m->check_before_update.set && m->check_before_update.value
      && m->limit.set
      && sr_cg_check_usage (dirfd, "memory.usage_in_bytes", m->limit.value, err) < 0)
    return -1;
  if (memory_limit_and_swap (dirfd, m, err) < 0)
    return -1;
  if (opt_nonzero_i64 (m->reservation)
      && write_i64 (dirfd, "memory.soft_limit_in_bytes", m->reservation.value, err) < 0)
    return -1;
  if (memory_kernel (dirfd, m, err) < 0)
    return -1;
  if (m->swappiness.set)
    {
      if (m->swappiness.value > 100)
        return sr_fail (err, EINVAL, "memory.swappiness %" PRIu64
                        " is out of range [0, 100]", m->swappiness.value);
      if (sr_cg_writef (dirfd, "memory.swappiness", err, "%" PRIu64,
                        m->swappiness.value) < 0)
        return -1;
    }
  if (m->disable_oom_killer.set && m->disable_oom_killer.value
      && sr_cg_write (dirfd, "memory.oom_control", "1", err) < 0)
    return -1;
  if (m->use_hierarchy.set
      && sr_cg_write (dirfd, "memory.use_hierarchy",
                      m->use_hierarchy.value ? "1" : "0", err) < 0)
    return -1;
  return 0;
}

/* The period bounds the quota: write the one that keeps quota/period
 * valid at each step (the period first, unless the kernel refuses it). */
static int
cpu_bandwidth (int dirfd, const oci_cpu *c, sr_error **err)
{
  bool period = c->period.set && c->period.value != 0;
  bool quota = opt_nonzero_i64 (c->quota);
  if (period)
    {
      sr_error *first = NULL;
      if (sr_cg_writef (dirfd, "cpu.cfs_period_us", &first, "%" PRIu64,
                        c->period.value) < 0)
        {
          bool retry = quota && first->errnum == EINVAL;
          if (!retry)
            {
              *err = first;
              return -1;
            }
          sr_error_free (first);
          if (write_i64 (dirfd, "cpu.cfs_quota_us", c->quota.value, err) < 0
              || sr_cg_writef (dirfd, "cpu.cfs_period_us", err, "%" PRIu64,
                               c->period.value) < 0)
            return -1;
          quota = false;
        }
    }
  if (quota && write_i64 (dirfd, "cpu.cfs_quota_us", c->quota.value, err) < 0)
    return -1;
  if (c->burst.set
      && sr_cg_writef (dirfd, "cpu.cfs_burst_us", err, "%" PRIu64,
                       c->burst.value) < 0)
    return -1;
  return 0;
}

int
sr_cg_v1_cpu (int dirfd, const oci_resources *r, sr_error **err)
{
  const oci_cpu *c = r->cpu;
  if (c->shares.set && c->shares.value
      && sr_cg_writef (dirfd, "cpu.shares", err, "%" PRIu64, c->shares.value) < 0)
    return -1;
  if (cpu_bandwidth (dirfd, c, err) < 0)
    return -1;
  /* The runtime needs a period to fit into. */
  if (c->realtime_period.set && c->realtime_period.value
      && sr_cg_writef (dirfd, "cpu.rt_period_us", err, "%" PRIu64,
                       c->realtime_period.value) < 0)
    return -1;
  if (opt_nonzero_i64 (c->realtime_runtime)
      && write_i64 (dirfd, "cpu.rt_runtime_us", c->realtime_runtime.value, err) < 0)
    return -1;
  if (c->idle.set && write_i64 (dirfd, "cpu.idle", c->idle.value, err) < 0)
    return -1;
  return 0;
}

static bool
has_file (int dirfd, const char *file)
{
  return faccessat (dirfd, file, F_OK, 0) == 0;
}

static int
write_throttle (int dirfd, const char *file, const oci_throttle_device *d,
                size_t n, sr_error **err)
{
  for (size_t i = 0; i < n; i++)
    if (sr_cg_writef (dirfd, file, err, "%" PRId64 ":%" PRId64 " %" PRIu64,
                      d[i].major, d[i].minor, d[i].rate) < 0)
      return -1;
  return 0;
}

static int
blkio_weight_devices (int dirfd, const oci_block_io *b, sr_error **err)
{
  /* CFQ's files, else BFQ's (Linux >= 5.0 has no CFQ). */
  const char *file = has_file (dirfd, "blkio.weight_device")
                         ? "blkio.weight_device" : "blkio.bfq.weight_device";
  for (size_t i = 0; i < b->weight_device_len; i++)
    {
      const oci_weight_device *d = &b->weight_device[i];
      if (d->weight.set
          && sr_cg_writef (dirfd, file, err, "%" PRId64 ":%" PRId64 " %" PRIu32,
                           d->major, d->minor, d->weight.value) < 0)
        return -1;
      if (d->leaf_weight.set
          && sr_cg_writef (dirfd, "blkio.leaf_weight_device", err,
                           "%" PRId64 ":%" PRId64 " %" PRIu32, d->major,
                           d->minor, d->leaf_weight.value) < 0)
        return -1;
    }
  return 0;
}

int
sr_cg_v1_blkio (int dirfd, const oci_resources *r, sr_error **err)
{
  const oci_block_io *b = r->block_io;
  const char *weight = has_file (dirfd, "blkio.weight") ? "blkio.weight"
                                                        : "blkio.bfq.weight";
  if (b->weight.set && b->weight.value
      && sr_cg_writef (dirfd, weight, err, "%" PRIu32, b->weight.value) < 0)
    return -1;
  if (b->leaf_weight.set && b->leaf_weight.value
      && sr_cg_writef (dirfd, "blkio.leaf_weight", err, "%" PRIu32,
                       b->leaf_weight.value) < 0)
    return -1;
  if (blkio_weight_devices (dirfd, b, err) < 0)
    return -1;
  static const char *const files[4] = {
    "blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
    "blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device",
  };
  struct sr_cg_throttle lists[4];
  sr_cg_throttle_lists (b, lists);
  for (size_t i = 0; i < 4; i++)
    if (write_throttle (dirfd, files[i], lists[i].d, lists[i].n, err) < 0)
      return -1;
  return 0;
}

int
sr_cg_v1_hugetlb (int dirfd, const oci_resources *r, sr_error **err)
{
  for (size_t i = 0; i < r->hugepage_limits_len; i++)
    {
      const oci_hugepage_limit *l = &r->hugepage_limits[i];
      _cleanup_free_ char *file = xasprintf ("hugetlb.%s.limit_in_bytes",
                                             l->page_size);
      if (sr_cg_writef (dirfd, file, err, "%" PRIu64, l->limit) < 0)
        return -1;
    }
  return 0;
}

int
sr_cg_v1_net_cls (int dirfd, const oci_resources *r, sr_error **err)
{
  return sr_cg_writef (dirfd, "net_cls.classid", err, "%" PRIu32,
                       r->network->class_id.value);
}

int
sr_cg_v1_net_prio (int dirfd, const oci_resources *r, sr_error **err)
{
  const oci_network *n = r->network;
  for (size_t i = 0; i < n->priorities_len; i++)
    if (sr_cg_writef (dirfd, "net_prio.ifpriomap", err, "%s %" PRIu32,
                      n->priorities[i].name, n->priorities[i].priority) < 0)
      return -1;
  return 0;
}
