/* process.apparmorProfile: the profile the process is confined by from its
 * execve on ("exec PROFILE" in attr/exec, what aa_change_onexec does).  A
 * profile on a host without AppArmor is an error, as it is for runc (whose
 * write to attr/exec fails there): containers never run unconfined while
 * the config asks for confinement.  Engines leave the field empty when
 * AppArmor is off. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "linux_attrs_internal.h"
#include "util/procfs.h"
#include "sandrun/util.h"

static bool
profile_set (const oci_process *p)
{
  return p != NULL && p->apparmor_profile != NULL
         && p->apparmor_profile[0] != '\0';
}

/* runc's test: the securityfs directory exists and the module says Y. */
bool
sr_apparmor_host_enabled (void)
{
  _cleanup_free_ char *enabled = NULL;
  struct stat st;

  if (stat ("/sys/kernel/security/apparmor", &st) < 0)
    return false;
  if (sr_read_file_at (AT_FDCWD, "/sys/module/apparmor/parameters/enabled", 64,
                       &enabled, NULL, NULL)
      < 0)
    return false;
  return enabled[0] == 'Y';
}

int
sr_apparmor_check (const oci_process *p, sr_error **err)
{
  if (!profile_set (p))
    return 0;
  if (strpbrk (p->apparmor_profile, "\n\r") != NULL)
    return sr_fail (err, 0,
                    "process.apparmorProfile: a line break in "
                    "the profile name");
  if (!sr_apparmor_host_enabled ())
    return sr_fail (err, 0,
                    "process.apparmorProfile: AppArmor is not "
                    "enabled on this host");
  return 0;
}

/* The per-LSM file (Linux 5.8) when there is one: attr/exec belongs to
 * whichever LSM came first, which with stacking need not be AppArmor. */
static const char *
exec_attr_path (void)
{
  _cleanup_close_ int dir = sr_procfs_open ("thread-self/attr/apparmor",
                                            O_PATH | O_DIRECTORY, NULL);
  return dir >= 0 ? "thread-self/attr/apparmor/exec" : "thread-self/attr/exec";
}

int
sr_apparmor_exec_profile (const oci_process *p, sr_error **err)
{
  if (!profile_set (p))
    return 0;
  _cleanup_free_ char *cmd = xasprintf ("exec %s", p->apparmor_profile);
  if (sr_procfs_write (exec_attr_path (), cmd, err) == 0)
    return 0;
  /* The file is there: ENOENT is AppArmor's answer for an unknown profile. */
  if (err != NULL && *err != NULL && (*err)->errnum == ENOENT)
    return sr_wrap (err, "process.apparmorProfile \"%s\" is not loaded",
                    p->apparmor_profile);
  return sr_wrap (err, "process.apparmorProfile \"%s\"", p->apparmor_profile);
}
