/* process.selinuxLabel and linux.mountLabel.  As runc: a process label on a
 * host without SELinux is an error (engines send empty labels there), a
 * mount label there is ignored (runc formats it away) but never silently.
 * Labelling the mounts themselves (context= on each filesystem mount, the
 * label on tmpfs/mqueue) is rootfs.c's part and not done yet, so on an
 * SELinux host a mount label is refused rather than pretended. */
#include <errno.h>
#include <string.h>
#include <sys/statfs.h>

#include "linux_attrs_internal.h"
#include "sandrun/log.h"
#include "sandrun/procfs.h"
#include "sandrun/util.h"

#define SELINUX_MAGIC_ 0xf97cff8c

static bool
label_set (const char *label)
{
  return label != NULL && label[0] != '\0';
}

/* selinuxfs mounted where libselinux looks for it. */
bool
sr_selinux_host_enabled (void)
{
  struct statfs sfs;
  return statfs ("/sys/fs/selinux", &sfs) == 0
         && (unsigned long) sfs.f_type == SELINUX_MAGIC_;
}

static int
check_mount_label (const oci_linux *l, bool enabled, sr_error **err)
{
  if (l == NULL || !label_set (l->mount_label))
    return 0;
  if (enabled)
    return sr_fail (err, 0,
                    "linux.mountLabel: labelling the "
                    "container's mounts is not supported yet");
  sr_warn ("linux.mountLabel ignored: SELinux is not enabled on this host");
  return 0;
}

int
sr_selinux_check (const oci_config *cfg, sr_error **err)
{
  const oci_process *p = cfg->process;
  bool enabled = sr_selinux_host_enabled ();

  if (p != NULL && label_set (p->selinux_label))
    {
      if (strpbrk (p->selinux_label, "\n\r") != NULL)
        return sr_fail (err, 0,
                        "process.selinuxLabel: a line break in "
                        "the label");
      if (!enabled)
        return sr_fail (err, 0,
                        "process.selinuxLabel: SELinux is not "
                        "enabled on this host");
    }
  return check_mount_label (cfg->linux_, enabled, err);
}

int
sr_selinux_exec_label (const oci_process *p, sr_error **err)
{
  if (p == NULL || !label_set (p->selinux_label))
    return 0;
  if (sr_procfs_write ("thread-self/attr/exec", p->selinux_label, err) < 0)
    return sr_wrap (err, "process.selinuxLabel \"%s\"", p->selinux_label);
  return 0;
}
