/* Placeholder until each attribute has its module: a configured attribute
 * is refused, never ignored. */
#include <errno.h>

#include "sandrun/linux_attrs.h"

int
sr_linux_attrs_parent (const oci_config *cfg, const char *id, pid_t init_pid, sr_error **err)
{
  const oci_linux *l = cfg->linux_;
  (void) id;
  (void) init_pid;
  if (l != NULL && l->net_devices_len > 0)
    return sr_fail (err, ENOTSUP, "linux.netDevices: not supported yet");
  if (l != NULL && l->intel_rdt != NULL)
    return sr_fail (err, ENOTSUP, "linux.intelRdt: not supported yet");
  return 0;
}

int
sr_linux_attrs_process (const oci_config *cfg, sr_error **err)
{
  const oci_linux *l = cfg->linux_;
  const oci_process *p = cfg->process;
  if (l != NULL && l->personality != NULL)
    return sr_fail (err, ENOTSUP, "linux.personality: not supported yet");
  if (l != NULL && l->memory_policy != NULL)
    return sr_fail (err, ENOTSUP, "linux.memoryPolicy: not supported yet");
  if (p->scheduler != NULL)
    return sr_fail (err, ENOTSUP, "process.scheduler: not supported yet");
  if (p->io_priority != NULL)
    return sr_fail (err, ENOTSUP, "process.ioPriority: not supported yet");
  if (p->exec_cpu_affinity != NULL)
    return sr_fail (err, ENOTSUP, "process.execCPUAffinity: not supported yet");
  return 0;
}

int
sr_linux_attrs_exec_labels (const oci_process *p, sr_error **err)
{
  if (p->apparmor_profile != NULL && p->apparmor_profile[0] != '\0')
    return sr_fail (err, ENOTSUP, "process.apparmorProfile: not supported yet");
  if (p->selinux_label != NULL && p->selinux_label[0] != '\0')
    return sr_fail (err, ENOTSUP, "process.selinuxLabel: not supported yet");
  return 0;
}
