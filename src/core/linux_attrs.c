/* The entry points of linux_attrs.h: each attribute's module called at its
 * step (see the header for the order and why). */
#include "core/linux_attrs.h"
#include "linux_attrs_internal.h"

int
sr_linux_attrs_parent (const oci_config *cfg, const char *id, pid_t init_pid,
                       sr_error **err)
{
  const oci_linux *l = cfg->linux_;
  const oci_process *p = cfg->process;

  if (sr_apparmor_check (p, err) < 0 || sr_selinux_check (cfg, err) < 0)
    return -1;
  if (p != NULL && sr_exec_cpu_affinity_check (p->exec_cpu_affinity, err) < 0)
    return -1;
  if (l == NULL)
    return 0;
  if (sr_memory_policy_check (l->memory_policy, err) < 0
      || sr_intel_rdt_apply (l->intel_rdt, id, init_pid, err) < 0)
    return -1;
  return sr_net_devices_move (cfg, init_pid, err);
}

int
sr_linux_attrs_process (const oci_config *cfg, sr_error **err)
{
  const oci_linux *l = cfg->linux_;
  const oci_process *p = cfg->process;

  if (l != NULL
      && (sr_personality_apply (l->personality, err) < 0
          || sr_memory_policy_apply (l->memory_policy, err) < 0))
    return -1;
  if (sr_io_priority_apply (p->io_priority, err) < 0)
    return -1;
  return sr_scheduler_apply (p->scheduler, err);
}

int
sr_linux_attrs_exec_labels (const oci_process *p, sr_error **err)
{
  if (sr_apparmor_exec_profile (p, err) < 0)
    return -1;
  return sr_selinux_exec_label (p, err);
}
