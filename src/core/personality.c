/* linux.personality: the execution domain the container's processes see
 * (LINUX32 makes uname report a 32-bit machine such as i686).  It survives
 * execve, so the init sets it on itself. */
#include <errno.h>
#include <sys/personality.h>

#include "linux_attrs_internal.h"
#include "sandrun/util.h"

int
sr_personality_apply (const oci_personality *p, sr_error **err)
{
  unsigned long domain;

  if (p == NULL)
    return 0;
  if (str_eq (p->domain, "LINUX"))
    domain = PER_LINUX;
  else if (str_eq (p->domain, "LINUX32"))
    domain = PER_LINUX32;
  else
    return sr_fail (err, 0,
                    "linux.personality.domain \"%s\" is not "
                    "supported (LINUX or LINUX32)",
                    p->domain ? p->domain : "");
  /* The spec defines no flag; the kernel's (ADDR_NO_RANDOMIZE, ...) mostly
   * weaken the process, so none is let through. */
  if (p->flags != NULL && p->flags[0] != NULL)
    return sr_fail (err, 0,
                    "linux.personality.flags: flag \"%s\" is not "
                    "supported",
                    p->flags[0]);
  if (personality (domain) < 0)
    return sr_fail (err, errno, "personality %s", p->domain);
  return 0;
}
