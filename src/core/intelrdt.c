/* linux.intelRdt: a resctrl group for the container (cache and memory
 * bandwidth allocation).  Refused with a clear error where resctrl is not
 * mounted, as here; where it is, creating the group is not implemented yet
 * (it needs delete to remove it again) and is refused as well, never
 * silently skipped. */
#include <errno.h>
#include <sys/statfs.h>

#include "linux_attrs_internal.h"
#include "sandrun/util.h"

#define RDTGROUP_SUPER_MAGIC_ 0x7655821

static bool
resctrl_mounted (void)
{
  struct statfs sfs;
  return statfs ("/sys/fs/resctrl", &sfs) == 0
         && (unsigned long) sfs.f_type == RDTGROUP_SUPER_MAGIC_;
}

int
sr_intel_rdt_apply (const oci_intel_rdt *rdt, const char *id, pid_t init_pid,
                    sr_error **err)
{
  (void) id;
  (void) init_pid;
  if (rdt == NULL)
    return 0;
  if (!resctrl_mounted ())
    return sr_fail (err, 0, "linux.intelRdt: resctrl is not mounted");
  return sr_fail (err, 0,
                  "linux.intelRdt: resctrl groups are not "
                  "supported yet");
}
