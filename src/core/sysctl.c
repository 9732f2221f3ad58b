/* linux.sysctl: written after the pivot through the verified procfs handle
 * of the container's own /proc.  Only sysctls of a namespace the container
 * has are allowed (as runc's validator does); a host-wide knob such as vm.*
 * would change the host. */
#include <errno.h>
#include <string.h>

#include "util/procfs.h"
#include "core/rootfs.h"
#include "core/sysctl.h"
#include "sandrun/util.h"

/* Split a sysctl name into its components: "net.ipv4.ip_forward", or in the
 * slash form of sysctl(8) for names whose parts hold dots
 * ("net/ipv4/conf/eth0.100/forwarding").  Every component is a plain name. */
static char **
sysctl_components (const char *name, sr_error **err)
{
  const char *sep = strchr (name, '/') ? "/" : ".";
  _cleanup_strv_ char **v = NULL;
  const char *p = name;

  for (;;)
    {
      size_t n = strcspn (p, sep);
      if (n == 0 || (n == 1 && p[0] == '.')
          || (n == 2 && strncmp (p, "..", 2) == 0))
        {
          sr_fail (err, EINVAL, "sysctl \"%s\": invalid name", name);
          return NULL;
        }
      _cleanup_free_ char *c = xstrndup (p, n);
      strv_append (&v, c);
      if (p[n] == '\0')
        break;
      p += n + 1;
    }
  return steal_pointer (&v);
}

/* The namespace a sysctl belongs to, NULL when it is not namespaced. */
static const char *
sysctl_namespace (char *const *c)
{
  if (strcmp (c[0], "net") == 0)
    return "network";
  if (c[1] == NULL)
    return NULL;
  if (strcmp (c[0], "fs") == 0 && strcmp (c[1], "mqueue") == 0)
    return "ipc";
  if (strcmp (c[0], "kernel") != 0)
    return NULL;
  if (str_has_prefix (c[1], "shm") || str_has_prefix (c[1], "msg")
      || strcmp (c[1], "sem") == 0 || str_has_prefix (c[1], "sem_"))
    return "ipc";
  if (strcmp (c[1], "hostname") == 0 || strcmp (c[1], "domainname") == 0)
    return "uts";
  return NULL;
}

static char *
sysctl_path (char *const *c)
{
  size_t len = strlen ("sys") + 1;
  char *s, *p;

  for (size_t i = 0; c[i]; i++)
    len += strlen (c[i]) + 1;
  p = s = xmalloc (len);
  p = stpcpy (p, "sys");
  for (size_t i = 0; c[i]; i++)
    {
      *p++ = '/';
      p = stpcpy (p, c[i]);
    }
  return s;
}

static int
sysctl_one (const oci_config *cfg, const char *name, const char *value,
            sr_error **err)
{
  _cleanup_strv_ char **c = sysctl_components (name, err);
  _cleanup_free_ char *path = NULL;
  const char *ns;

  if (c == NULL)
    return -1;
  ns = sysctl_namespace (c);
  if (ns == NULL)
    return sr_fail (err, EPERM, "sysctl \"%s\": not namespaced, it would "
                    "change the host", name);
  if (sr_config_namespace (cfg, ns) == NULL)
    return sr_fail (err, EPERM, "sysctl \"%s\": needs the container's own %s "
                    "namespace", name, ns);
  path = sysctl_path (c);
  if (sr_procfs_write (path, value ? value : "", err) < 0)
    return sr_wrap (err, "sysctl \"%s\"", name);
  return 0;
}

int
sr_sysctl_apply (const oci_config *cfg, sr_error **err)
{
  const oci_map *m = cfg->linux_ ? &cfg->linux_->sysctl : NULL;

  if (m == NULL || m->len == 0)
    return 0;
  /* The handle must be the container's procfs: its net, ipc and uts views
   * are those of the namespaces the init is in now. */
  sr_procfs_reset ();
  for (size_t i = 0; i < m->len; i++)
    if (sysctl_one (cfg, m->v[i].key, m->v[i].value, err) < 0)
      return -1;
  return 0;
}
