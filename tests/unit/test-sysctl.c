/* linux.sysctl refusals: every case here fails before anything is written. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/sysctl.h"
#include "sandrun/util.h"
#include "unit.h"

/* Apply one sysctl with the namespaces listed in `ns` (NULL-terminated). */
static int
apply_one (const char *name, const char *const *ns, sr_error **err)
{
  oci_namespace nss[8];
  oci_kv kv = { (char *) name, (char *) "1" };
  oci_linux lx = { 0 };
  oci_config cfg = { 0 };
  size_t n = 0;

  for (; ns && ns[n] && n < ARRAY_SIZE (nss); n++)
    nss[n] = (oci_namespace) { (char *) ns[n], NULL };
  lx.namespaces = nss;
  lx.namespaces_len = n;
  lx.sysctl.v = &kv;
  lx.sysctl.len = 1;
  cfg.linux_ = &lx;
  return sr_sysctl_apply (&cfg, err);
}

static void
check_refused (const char *name, const char *const *ns, int want_errno,
               const char *want_text)
{
  sr_error *err = NULL;
  int rc = apply_one (name, ns, &err);
  CHECK (rc < 0 && err && err->errnum == want_errno
             && strstr (err->msg, want_text) != NULL,
         "%s refused (%s)", name, want_text);
  if (err)
    printf ("#   %s\n", err->msg);
  sr_error_free (err);
}

int
main (void)
{
  const char *all[] = { "network", "ipc", "uts", "pid", "mount", NULL };
  const char *none[] = { "pid", "mount", NULL };

  check_refused ("vm.swappiness", all, EPERM, "not namespaced");
  check_refused ("kernel.panic", all, EPERM, "not namespaced");
  check_refused ("kernel", all, EPERM, "not namespaced");
  check_refused ("fs.file-max", all, EPERM, "not namespaced");
  check_refused ("net.ipv4.ip_forward", none, EPERM, "network namespace");
  check_refused ("kernel.shmmax", none, EPERM, "ipc namespace");
  check_refused ("kernel.msgmnb", none, EPERM, "ipc namespace");
  check_refused ("kernel.sem", none, EPERM, "ipc namespace");
  check_refused ("fs.mqueue.queues_max", none, EPERM, "ipc namespace");
  check_refused ("kernel.hostname", none, EPERM, "uts namespace");
  check_refused ("kernel.semaphore", all, EPERM, "not namespaced");
  check_refused ("net..ipv4", all, EINVAL, "invalid name");
  check_refused ("net.ipv4.", all, EINVAL, "invalid name");
  check_refused ("", all, EINVAL, "invalid name");
  check_refused ("net/ipv4/../../vm/swappiness", all, EINVAL, "invalid name");
  check_refused ("net/./ipv4", all, EINVAL, "invalid name");
  check_refused ("/net/ipv4/ip_forward", all, EINVAL, "invalid name");
  check_refused ("net.ipv4/..", all, EINVAL, "invalid name");

  oci_config empty = { 0 };
  CHECK (sr_sysctl_apply (&empty, NULL) == 0, "no linux section: nothing");
  return unit_finish ();
}
