/* process.selinuxLabel and linux.mountLabel.  As runc: a process label on a
 * host without SELinux is an error (engines send empty labels there), a
 * mount label there is ignored (runc formats it away) but never silently.
 * With SELinux, the mount label is the context= option of every new
 * filesystem the container gets but proc, sysfs, cgroup hierarchies and
 * mqueue, whose root is labelled after the mount (rootfs.c asks here). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/xattr.h>

#include "linux_attrs_internal.h"
#include "core/linux_attrs.h"
#include "sandrun/log.h"
#include "util/procfs.h"
#include "util/safepath.h"
#include "sandrun/util.h"

#define SELINUX_MAGIC_ 0xf97cff8c

static bool
label_set (const char *label)
{
  return label != NULL && label[0] != '\0';
}

/* Why a label cannot be used, or NULL.  A line break would end the write to
 * attr/exec early; a double quote would end the quoted context="..." in the
 * mount data. */
static const char *
label_flaw (const char *label, bool quoted)
{
  if (strpbrk (label, "\n\r") != NULL)
    return "a line break in the label";
  if (quoted && strchr (label, '"') != NULL)
    return "a double quote in the label";
  return NULL;
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
  const char *flaw;

  if (l == NULL || !label_set (l->mount_label))
    return 0;
  flaw = label_flaw (l->mount_label, true);
  if (flaw != NULL)
    return sr_fail (err, 0, "linux.mountLabel: %s", flaw);
  if (!enabled)
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
      const char *flaw = label_flaw (p->selinux_label, false);
      if (flaw != NULL)
        return sr_fail (err, 0, "process.selinuxLabel: %s", flaw);
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

/* ---- linux.mountLabel ---------------------------------------------------- */

/* New filesystems mounted without context= (runc passes no label): proc
 * and sysfs cannot be labelled, cgroup hierarchies keep the policy's
 * label, and older kernels refuse the option on mqueue. */
static const char *const unlabelled_fs[] = {
  "proc", "sysfs", "cgroup", "cgroup2", "mqueue", "bind",
};

static bool
takes_context (const char *fstype)
{
  if (fstype == NULL)
    return false;
  for (size_t i = 0; i < ARRAY_SIZE (unlabelled_fs); i++)
    if (strcmp (fstype, unlabelled_fs[i]) == 0)
      return false;
  return true;
}

const char *
sr_selinux_mount_label (const oci_config *cfg)
{
  const char *label = cfg->linux_ ? cfg->linux_->mount_label : NULL;

  if (!label_set (label) || label_flaw (label, true) != NULL
      || !sr_selinux_host_enabled ())
    return NULL;
  return label;
}

char **
sr_selinux_mount_data (char *const *data, const char *fstype,
                       const char *label)
{
  _cleanup_free_ char *opt = NULL;
  char **out;

  if (!label_set (label) || label_flaw (label, true) != NULL
      || !takes_context (fstype))
    return NULL;
  /* Quoted: the label's MCS categories hold commas, and mount(2) splits
   * its data at commas outside quotes. */
  opt = xasprintf ("context=\"%s\"", label);
  out = strv_dup (data);
  strv_append (&out, opt);
  return out;
}

int
sr_selinux_label_mount_root (int mntfd, const char *fstype, const char *label,
                             sr_error **err)
{
  _cleanup_close_ int fd = -1;

  if (!label_set (label) || !str_eq (fstype, "mqueue"))
    return 0;
  fd = sr_reopen_fd (mntfd, O_RDONLY | O_DIRECTORY, err);
  if (fd < 0)
    return -1;
  if (fsetxattr (fd, "security.selinux", label, strlen (label), 0) < 0)
    return sr_fail (err, errno, "linux.mountLabel \"%s\" on the mqueue root",
                    label);
  return 0;
}
