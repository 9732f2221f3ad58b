/* process.scheduler: policy, nice, priority, flags and the deadline
 * parameters through sched_setattr(2), applied by the init to itself and so
 * inherited by the process.  Checked first as runc's validator does, so a
 * config rejected by one runtime is rejected by the other. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux_attrs_internal.h"
#include "sandrun/util.h"

/* include/uapi/linux/sched/types.h, SCHED_ATTR_SIZE_VER1: glibc has no
 * wrapper, and the utilisation clamps need the larger size. */
struct sched_attr_v1
{
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
  uint32_t sched_util_min;
  uint32_t sched_util_max;
};

#define SCHED_ISO_ 4 /* reserved by the kernel, never implemented */

static const struct
{
  const char *name;
  uint32_t policy;
} policies[] = {
  { "SCHED_OTHER", 0 },    { "SCHED_FIFO", 1 },         { "SCHED_RR", 2 },
  { "SCHED_BATCH", 3 },    { "SCHED_ISO", SCHED_ISO_ }, { "SCHED_IDLE", 5 },
  { "SCHED_DEADLINE", 6 },
};

static const struct
{
  const char *name;
  uint64_t flag;
} sched_flags[] = {
  { "SCHED_FLAG_RESET_ON_FORK", 0x01 },  { "SCHED_FLAG_RECLAIM", 0x02 },
  { "SCHED_FLAG_DL_OVERRUN", 0x04 },     { "SCHED_FLAG_KEEP_POLICY", 0x08 },
  { "SCHED_FLAG_KEEP_PARAMS", 0x10 },    { "SCHED_FLAG_UTIL_CLAMP_MIN", 0x20 },
  { "SCHED_FLAG_UTIL_CLAMP_MAX", 0x40 },
};

static int
parse_policy (const char *name, uint32_t *out, sr_error **err)
{
  for (size_t i = 0; i < ARRAY_SIZE (policies); i++)
    if (str_eq (name, policies[i].name))
      {
        if (policies[i].policy == SCHED_ISO_)
          return sr_fail (err, 0,
                          "process.scheduler.policy SCHED_ISO "
                          "is not implemented by Linux");
        *out = policies[i].policy;
        return 0;
      }
  return sr_fail (err, 0, "process.scheduler.policy \"%s\" is unknown",
                  name ? name : "");
}

static int
parse_flags (char *const *names, uint64_t *out, sr_error **err)
{
  *out = 0;
  for (size_t i = 0; names != NULL && names[i] != NULL; i++)
    {
      size_t j;
      for (j = 0; j < ARRAY_SIZE (sched_flags); j++)
        if (strcmp (names[i], sched_flags[j].name) == 0)
          break;
      if (j == ARRAY_SIZE (sched_flags))
        return sr_fail (err, 0,
                        "process.scheduler.flags: \"%s\" is "
                        "unknown",
                        names[i]);
      *out |= sched_flags[j].flag;
    }
  return 0;
}

static bool
is_realtime (uint32_t policy)
{
  return policy == 1 || policy == 2;
}

/* runc's checks, plus the realtime priority range the kernel enforces. */
static int
check_values (const oci_scheduler *s, uint32_t policy, sr_error **err)
{
  int32_t prio = s->priority.set ? s->priority.value : 0;

  if (s->nice.set && (s->nice.value < -20 || s->nice.value > 19))
    return sr_fail (err, 0,
                    "process.scheduler.nice %" PRId32
                    " is out of range (-20 to 19)",
                    s->nice.value);
  if (prio != 0 && !is_realtime (policy))
    return sr_fail (err, 0,
                    "process.scheduler.priority is only for "
                    "SCHED_FIFO and SCHED_RR");
  if (is_realtime (policy) && (prio < 1 || prio > 99))
    return sr_fail (err, 0,
                    "process.scheduler.priority %" PRId32
                    " is out of range for %s (1 to 99)",
                    prio, s->policy);
  if (policy != 6
      && ((s->runtime.set && s->runtime.value != 0)
          || (s->deadline.set && s->deadline.value != 0)
          || (s->period.set && s->period.value != 0)))
    return sr_fail (err, 0,
                    "process.scheduler runtime, deadline and "
                    "period are only for SCHED_DEADLINE");
  return 0;
}

/* A realtime EPERM is rarely about privileges alone: with RT group
 * scheduling a cgroup has no realtime budget until it is given one. */
static int
sched_fail (const char *name, uint32_t policy, int errnum, sr_error **err)
{
  if (errnum == EPERM && is_realtime (policy))
    return sr_fail (err, errnum,
                    "process.scheduler: sched_setattr %s (needs CAP_SYS_NICE "
                    "in the initial user namespace and, with RT group "
                    "scheduling, linux.resources.cpu.realtimeRuntime)",
                    name);
  return sr_fail (err, errnum, "process.scheduler: sched_setattr %s", name);
}

int
sr_scheduler_apply (const oci_scheduler *s, sr_error **err)
{
  struct sched_attr_v1 attr;
  uint32_t policy = 0;
  uint64_t flags = 0;

  if (s == NULL)
    return 0;
  if (parse_policy (s->policy, &policy, err) < 0
      || parse_flags (s->flags, &flags, err) < 0
      || check_values (s, policy, err) < 0)
    return -1;

  memset (&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.sched_policy = policy;
  attr.sched_flags = flags;
  attr.sched_nice = s->nice.set ? s->nice.value : 0;
  attr.sched_priority = s->priority.set ? (uint32_t) s->priority.value : 0;
  attr.sched_runtime = s->runtime.set ? s->runtime.value : 0;
  attr.sched_deadline = s->deadline.set ? s->deadline.value : 0;
  attr.sched_period = s->period.set ? s->period.value : 0;
  if (syscall (SYS_sched_setattr, 0, &attr, 0) < 0)
    return sched_fail (s->policy, policy, errno, err);
  return 0;
}
