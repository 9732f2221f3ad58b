/* Writing resources to a cgroup v2 hierarchy, converting v1-style values
 * where needed (convert.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "resources.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

static int
write_limit (int dirfd, const char *file, int64_t v, sr_error **err)
{
  _cleanup_free_ char *value = sr_cg_v2_limit (v);
  return sr_cg_write (dirfd, file, value, err);
}

static int
memory_swap (int dirfd, const oci_memory *m, sr_error **err)
{
  int64_t swap;
  if (sr_cg_swap_to_v2 (m->swap.set ? m->swap.value : 0,
                        m->limit.set ? m->limit.value : 0, &swap, err) < 0)
    return -1;
  /* 0 is "unset", except when swap equals the limit: no swap at all. */
  bool no_swap = swap == 0 && m->swap.set && m->swap.value > 0;
  if (swap == 0 && !no_swap)
    return 0;
  /* Without swap accounting there is no memory.swap.max, and both "max"
   * and "0" are then what the kernel does anyway. */
  if ((swap < 0 || no_swap)
      && faccessat (dirfd, "memory.swap.max", F_OK, 0) < 0 && errno == ENOENT)
    return 0;
  return write_limit (dirfd, "memory.swap.max", swap, err);
}

static void
memory_warn_ignored (const oci_memory *m)
{
  if (m->kernel.set && m->kernel.value)
    sr_warn ("memory.kernel is ignored on cgroup v2");
  if (m->kernel_tcp.set && m->kernel_tcp.value)
    sr_warn ("memory.kernelTCP is ignored on cgroup v2");
  if (m->swappiness.set)
    sr_warn ("memory.swappiness is ignored on cgroup v2");
  if (m->disable_oom_killer.set && m->disable_oom_killer.value)
    sr_warn ("memory.disableOOMKiller is ignored on cgroup v2");
  if (m->use_hierarchy.set && !m->use_hierarchy.value)
    sr_warn ("memory.useHierarchy false is ignored: cgroup v2 is always "
             "hierarchical");
}

int
sr_cg_v2_memory (int dirfd, const oci_resources *r, sr_error **err)
{
  const oci_memory *m = r->memory;
  if (m->check_before_update.set && m->check_before_update.value
      && m->limit.set
      && sr_cg_check_usage (dirfd, "memory.current", m->limit.value, err) < 0)
    return -1;
  if (memory_swap (dirfd, m, err) < 0)
    return -1;
  if (m->limit.set && m->limit.value != 0
      && write_limit (dirfd, "memory.max", m->limit.value, err) < 0)
    return -1;
  if (m->reservation.set && m->reservation.value != 0
      && write_limit (dirfd, "memory.low", m->reservation.value, err) < 0)
    return -1;
  memory_warn_ignored (m);
  return 0;
}

/* cpu.max is "QUOTA PERIOD"; a missing quota means "max" (runc). */
static int
cpu_max (int dirfd, const oci_cpu *c, sr_error **err)
{
  int64_t quota = c->quota.set ? c->quota.value : 0;
  uint64_t period = c->period.set ? c->period.value : 0;
  if (quota == 0 && period == 0)
    return 0;
  _cleanup_free_ char *q = quota > 0 ? xasprintf ("%" PRId64, quota)
                                      : xstrdup ("max");
  if (period == 0)
    return sr_cg_write (dirfd, "cpu.max", q, err);
  return sr_cg_writef (dirfd, "cpu.max", err, "%s %" PRIu64, q, period);
}

int
sr_cg_v2_cpu (int dirfd, const oci_resources *r, sr_error **err)
{
  const oci_cpu *c = r->cpu;
  if ((c->realtime_runtime.set && c->realtime_runtime.value)
      || (c->realtime_period.set && c->realtime_period.value))
    return sr_fail (err, ENOTSUP, "cpu.realtimeRuntime/realtimePeriod are "
                    "not supported on cgroup v2");
  if (c->idle.set
      && sr_cg_writef (dirfd, "cpu.idle", err, "%" PRId64, c->idle.value) < 0)
    return -1;
  if (c->shares.set && c->shares.value
      && sr_cg_writef (dirfd, "cpu.weight", err, "%" PRIu64,
                       sr_cg_shares_to_weight (c->shares.value)) < 0)
    return -1;
  if (cpu_max (dirfd, c, err) < 0)
    return -1;
  if (c->burst.set
      && sr_cg_writef (dirfd, "cpu.max.burst", err, "%" PRIu64,
                       c->burst.value) < 0)
    return -1;
  return 0;
}

/* io.max keys; 0 is "no limit", as writing 0 does on v1. */
static int
io_max (int dirfd, const char *key, const oci_throttle_device *d, size_t n,
        sr_error **err)
{
  for (size_t i = 0; i < n; i++)
    {
      _cleanup_free_ char *rate = d[i].rate ? xasprintf ("%" PRIu64, d[i].rate)
                                            : xstrdup ("max");
      if (sr_cg_writef (dirfd, "io.max", err, "%" PRId64 ":%" PRId64 " %s=%s",
                        d[i].major, d[i].minor, key, rate) < 0)
        return -1;
    }
  return 0;
}

/* BFQ takes blkio's weights as they are; io.weight needs converting. */
static uint64_t
io_weight_value (bool bfq, uint32_t weight)
{
  return bfq ? weight : sr_cg_blkio_weight_to_io_weight (weight);
}

int
sr_cg_v2_io (int dirfd, const oci_resources *r, sr_error **err)
{
  const oci_block_io *b = r->block_io;
  bool bfq = faccessat (dirfd, "io.bfq.weight", F_OK, 0) == 0;
  const char *weight = bfq ? "io.bfq.weight" : "io.weight";
  if (b->weight.set && b->weight.value
      && sr_cg_writef (dirfd, weight, err, "%" PRIu64,
                       io_weight_value (bfq, b->weight.value)) < 0)
    return -1;
  if ((b->leaf_weight.set && b->leaf_weight.value))
    sr_warn ("blockIO.leafWeight is ignored on cgroup v2");
  for (size_t i = 0; i < b->weight_device_len; i++)
    {
      const oci_weight_device *d = &b->weight_device[i];
      if (d->leaf_weight.set)
        sr_warn ("blockIO.weightDevice leafWeight is ignored on cgroup v2");
      if (d->weight.set
          && sr_cg_writef (dirfd, weight, err, "%" PRId64 ":%" PRId64 " %" PRIu64,
                           d->major, d->minor,
                           io_weight_value (bfq, d->weight.value)) < 0)
        return -1;
    }
  static const char *const keys[4] = { "rbps", "wbps", "riops", "wiops" };
  struct sr_cg_throttle lists[4];
  sr_cg_throttle_lists (b, lists);
  for (size_t i = 0; i < 4; i++)
    if (io_max (dirfd, keys[i], lists[i].d, lists[i].n, err) < 0)
      return -1;
  return 0;
}

int
sr_cg_v2_hugetlb (int dirfd, const oci_resources *r, sr_error **err)
{
  for (size_t i = 0; i < r->hugepage_limits_len; i++)
    {
      const oci_hugepage_limit *l = &r->hugepage_limits[i];
      _cleanup_free_ char *max = xasprintf ("hugetlb.%s.max", l->page_size);
      _cleanup_free_ char *rsvd = xasprintf ("hugetlb.%s.rsvd.max", l->page_size);
      if (sr_cg_writef (dirfd, max, err, "%" PRIu64, l->limit) < 0)
        return -1;
      /* Reservations (Linux >= 5.7) count pages mmap'd but not yet
       * faulted in: limiting them too keeps the limit from being dodged. */
      if (faccessat (dirfd, rsvd, F_OK, 0) == 0
          && sr_cg_writef (dirfd, rsvd, err, "%" PRIu64, l->limit) < 0)
        return -1;
    }
  return 0;
}

/* Interface files that move processes or reshape the tree are not
 * resources: "unified" must not name them. */
static bool
unified_key_allowed (const char *key)
{
  if (key[0] == '\0' || key[0] == '.' || strchr (key, '/') != NULL
      || strchr (key, '.') == NULL)
    return false;
  if (!str_has_prefix (key, "cgroup."))
    return true;
  return str_has_prefix (key, "cgroup.max.");
}

int
sr_cg_v2_unified (int dirfd, const oci_resources *r, sr_error **err)
{
  for (size_t i = 0; i < r->unified.len; i++)
    {
      const oci_kv *kv = &r->unified.v[i];
      if (!unified_key_allowed (kv->key))
        return sr_fail (err, EINVAL, "unified: \"%s\" is not a resource file",
                        kv->key);
      if (sr_cg_write (dirfd, kv->key, kv->value ? kv->value : "", err) < 0)
        return -1;
    }
  return 0;
}
