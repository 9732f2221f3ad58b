/* process.execCPUAffinity.  The spec applies it to processes that join a
 * running container (exec), not to the init: CRI-O sets it in config.json
 * for exec'd processes, so pinning the init with it would pin the workload.
 * For the init the lists are only checked, as runc does at create. */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "linux_attrs_internal.h"
#include "core/linux_attrs.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

#define CPU_POSSIBLE "/sys/devices/system/cpu/possible"

static bool
list_set (const char *s)
{
  return s != NULL && s[0] != '\0';
}

static int
check_list (const char *s, const char *what, unsigned long limit,
            const char *limit_text, sr_error **err)
{
  _cleanup_idset_ struct sr_idset set = { 0 };

  if (!list_set (s))
    return 0;
  return sr_idset_parse (s, limit, limit_text, what, "CPU", &set, err);
}

int
sr_exec_cpu_affinity_check (const oci_exec_cpu_affinity *a, sr_error **err)
{
  _cleanup_free_ char *possible = NULL;
  unsigned long limit;

  if (a == NULL || (!list_set (a->initial) && !list_set (a->final)))
    return 0;
  if (sr_idset_host_limit (CPU_POSSIBLE, &limit, &possible, err) < 0)
    return sr_wrap (err, "process.execCPUAffinity");
  if (check_list (a->initial, "process.execCPUAffinity.initial", limit,
                  possible, err)
      < 0)
    return -1;
  return check_list (a->final, "process.execCPUAffinity.final", limit,
                     possible, err);
}

static int
set_affinity (const char *s, const char *what, sr_error **err)
{
  _cleanup_idset_ struct sr_idset set = { 0 };

  if (!list_set (s))
    return 0;
  if (sr_idset_parse (s, SR_IDSET_MAX, NULL, what, "CPU", &set, err) < 0)
    return -1;
  if (sched_setaffinity (0, set.nwords * sizeof (unsigned long),
                         (cpu_set_t *) set.bits)
      < 0)
    return sr_fail (err, errno, "%s: sched_setaffinity \"%s\"", what, s);
  return 0;
}

int
sr_exec_cpu_affinity_initial (const oci_exec_cpu_affinity *a, sr_error **err)
{
  return a == NULL ? 0
                   : set_affinity (a->initial,
                                   "process.execCPUAffinity.initial", err);
}

int
sr_exec_cpu_affinity_final (const oci_exec_cpu_affinity *a, sr_error **err)
{
  return a == NULL
             ? 0
             : set_affinity (a->final, "process.execCPUAffinity.final", err);
}

void
sr_cpu_affinity_reset (const oci_exec_cpu_affinity *a)
{
  cpu_set_t all;

  if (a != NULL && list_set (a->initial))
    return;
  memset (&all, 0xff, sizeof all);
  /* The kernel keeps the CPUs of the cgroup's cpuset; failing, the process
   * keeps the runtime's affinity, as before runc 1.2. */
  if (sched_setaffinity (0, sizeof all, &all) < 0)
    sr_debug ("reset the CPU affinity: %s", strerror (errno));
}
