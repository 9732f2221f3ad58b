/* Writing resources to a cgroup v2 hierarchy, converting v1-style values
 * where needed (convert.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
