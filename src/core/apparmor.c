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
#include "sandrun/procfs.h"
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

int
sr_apparmor_exec_profile (const oci_process *p, sr_error **err)
{
  _cleanup_error_ sr_error *first = NULL;

  if (!profile_set (p))
    return 0;
  _cleanup_free_ char *cmd = xasprintf ("exec %s", p->apparmor_profile);
  /* The per-LSM file (Linux 5.8) first: attr/exec belongs to whichever LSM
   * came first, which with stacking need not be AppArmor. */
  if (sr_procfs_write ("thread-self/attr/apparmor/exec", cmd, &first) == 0)
    return 0;
  if (first->errnum != ENOENT)
    return sr_fail (err, 0, "process.apparmorProfile \"%s\": %s",
                    p->apparmor_profile, first->msg);
  if (sr_procfs_write ("thread-self/attr/exec", cmd, err) < 0)
    return sr_wrap (err, "process.apparmorProfile \"%s\"",
                    p->apparmor_profile);
  return 0;
}
