/* Which driver makes a container's cgroup: cgroupfs directly (cgroup.c) or
 * a systemd transient unit (systemd.c). */
#include "core/cgroup/cgroup.h"
#include "core/cgroup/cgroup_systemd.h"

char *
sr_cgroup_plan (const struct sr_cgroup_spec *spec, sr_error **err)
{
  if (spec->systemd)
    return sr_cgroup_systemd_plan_path (spec->id, spec->cgroups_path, err);
  return sr_cgroup_plan_path (spec->id, spec->cgroups_path, err);
}

int
sr_cgroup_make (const struct sr_cgroup_spec *spec, sr_cgroup **out,
                sr_error **err)
{
  if (spec->systemd)
    return sr_cgroup_systemd_create (spec->id, spec->cgroups_path, spec->res,
                                     spec->devices, spec->devices_len, out,
                                     err);
  return sr_cgroup_create_with_devices (spec->id, spec->cgroups_path,
                                        spec->res, spec->devices,
                                        spec->devices_len, out, err);
}
