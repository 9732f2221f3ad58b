/* The "cgroup" mount of a container: the cgroup filesystem as the
 * container sees it, made by the init in its mount namespace through the
 * rootfs code's primitives (targets opened under the rootfs, safepath). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "core/cgroup/cgroup.h"
#include "util/mountinfo.h"
#include "core/mountopt.h"
#include "util/procfs.h"
#include "util/safepath.h"
#include "sandrun/util.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define HOST_CGROUP_ROOT "/sys/fs/cgroup"

/* The line of /proc/self/cgroup ("ID:controllers:path") whose controllers
 * `match`: its path, or with `want_ctrls` its controllers; malloc'd, NULL
 * when no line matches. */
static char *
find_self_cgroup (const char *self_cgroup,
                  bool (*match) (const char *ctrls, const char *arg),
                  const char *arg, bool want_ctrls)
{
  _cleanup_free_ char *copy = xstrdup (self_cgroup);
  char *save = NULL;

  for (char *l = strtok_r (copy, "\n", &save); l;
       l = strtok_r (NULL, "\n", &save))
    {
      char *c = strchr (l, ':');
      char *p = c ? strchr (c + 1, ':') : NULL;
      if (p == NULL)
        continue;
      *p = '\0';
      if (match (c + 1, arg))
        return xstrdup (want_ctrls ? c + 1 : p + 1);
    }
  return NULL;
}

static bool
same_controllers (const char *ctrls, const char *want)
{
  return strcmp (ctrls, want) == 0;
}

/* The path of this process's cgroup in the hierarchy of `controllers` (""
 * for cgroup2). */
static char *
own_cgroup_path (const char *self_cgroup, const char *controllers)
{
  return find_self_cgroup (self_cgroup, same_controllers, controllers, false);
}

static int
read_proc (const char *path, char **out, sr_error **err)
{
  size_t len;
  return sr_procfs_read (path, out, &len, err);
}

/* cgroup v2 host: a cgroup2 mount (the cgroup namespace's view).  Without
 * a cgroup namespace of its own, a user namespace may not mount it: the
 * container's own cgroup directory is bound instead (as runc does). */
static int
mount_cgroup2 (const struct sr_cgroup_mounter *mt, const char *dest,
               const char *source, const struct sr_mount_opts *o,
               sr_error **err)
{
  _cleanup_error_ sr_error *first = NULL;
  _cleanup_free_ char *self = NULL, *path = NULL, *src = NULL;

  if (mt->new_fs (mt->env, dest, "cgroup2", source ? source : "cgroup2", o,
                  &first)
      == 0)
    return 0;
  if (first->errnum != EPERM && first->errnum != EBUSY)
    {
      *err = steal_pointer (&first);
      return -1;
    }
  if (read_proc ("self/cgroup", &self, err) < 0)
    return -1;
  path = own_cgroup_path (self, "");
  if (path == NULL)
    return sr_fail (err, ENOENT, "no cgroup v2 entry in /proc/self/cgroup");
  src = xasprintf (HOST_CGROUP_ROOT "%s", path);
  struct sr_mount_opts bind = *o;
  bind.flags |= MS_BIND | MS_REC;
  bind.data = NULL;
  return mt->bind_host (mt->env, dest, src, &bind, err);
}

/* Every controller of `ctrls` (a v1 line's, not empty) is among the
 * mount options `superopts`. */
static bool
ctrls_in_opts (const char *ctrls, const char *superopts)
{
  _cleanup_free_ char *copy = xstrdup (ctrls);
  char *save = NULL;
  bool all = *ctrls != '\0';
  for (char *k = strtok_r (copy, ",", &save); k && all;
       k = strtok_r (NULL, ",", &save))
    all = sr_mountinfo_has_opt (superopts, k);
  return all;
}

/* The /proc/self/cgroup controller field of a v1 hierarchy mounted with
 * `superopts` ("rw,cpu,cpuacct" -> "cpu,cpuacct", "rw,name=systemd" ->
 * "name=systemd"): the line of /proc/self/cgroup whose every controller
 * appears among the options. */
static char *
v1_controllers (const char *self_cgroup, const char *superopts)
{
  return find_self_cgroup (self_cgroup, ctrls_in_opts, superopts, true);
}

/* A co-mounted hierarchy "cpu,cpuacct" also answers to "cpu" and
 * "cpuacct", as on the host. */
static int
cgroup_v1_aliases (int dirfd, const char *name, sr_error **err)
{
  _cleanup_free_ char *copy = xstrdup (name);
  char *save = NULL;

  if (strchr (name, ',') == NULL)
    return 0;
  for (char *k = strtok_r (copy, ",", &save); k;
       k = strtok_r (NULL, ",", &save))
    if (symlinkat (name, dirfd, k) < 0 && errno != EEXIST)
      return sr_fail (err, errno, "symlink \"%s\"", k);
  return 0;
}

static int
mount_cgroup_v1_one (const struct sr_cgroup_mounter *mt, const char *dest,
                     const struct sr_mountinfo *e, const char *self,
                     const struct sr_mount_opts *o, sr_error **err)
{
  const char *name = e->point + strlen (HOST_CGROUP_ROOT "/");
  bool v2 = strcmp (e->fstype, "cgroup2") == 0;
  _cleanup_free_ char *ctrls
      = v2 ? xstrdup ("") : v1_controllers (self, e->superopts);
  _cleanup_free_ char *sub = xasprintf ("%s/%s", dest, name);
  _cleanup_free_ char *path = NULL, *src = NULL;
  struct sr_mount_opts h = *o;

  if (ctrls == NULL)
    return 0; /* a hierarchy the process is not in: nothing to show */
  if (mt->cgroupns)
    {
      h.data = NULL;
      if (!v2)
        strv_append (&h.data, ctrls);
      int r = mt->new_fs (mt->env, sub, e->fstype, e->fstype, &h, err);
      strv_free (h.data);
      return r;
    }
  path = own_cgroup_path (self, ctrls);
  if (path == NULL)
    return 0;
  src = xasprintf ("%s%s", e->point, path);
  h.flags |= MS_BIND;
  h.data = NULL;
  return mt->bind_host (mt->env, sub, src, &h, err);
}

/* cgroup v1 or hybrid host: a tmpfs holding one mount per hierarchy the
 * process belongs to (its own cgroup bound from the host, or with a cgroup
 * namespace a fresh mount of the hierarchy).  Limits: net_cls,net_prio and
 * the like appear as found on the host; hierarchies mounted elsewhere than
 * /sys/fs/cgroup/NAME are not shown. */
static int
mount_cgroup_v1 (const struct sr_cgroup_mounter *mt, const char *dest,
                 const struct sr_mount_opts *o, sr_error **err)
{
  _cleanup_free_ char *self = NULL, *info = NULL;
  _cleanup_close_ int dirfd = -1;
  struct sr_mount_opts tmp = { .flags = o->flags & ~MS_RDONLY };
  char *save = NULL;

  if (read_proc ("self/cgroup", &self, err) < 0
      || read_proc ("self/mountinfo", &info, err) < 0)
    return -1;
  strv_append (&tmp.data, "mode=755");
  int r = mt->new_fs (mt->env, dest, "tmpfs", "tmpfs", &tmp, err);
  strv_free (tmp.data);
  if (r < 0)
    return -1;
  dirfd = sr_open_in_root (mt->rootfd, dest, O_PATH | O_DIRECTORY, 0, err);
  if (dirfd < 0)
    return -1;
  for (char *l = strtok_r (info, "\n", &save); l;
       l = strtok_r (NULL, "\n", &save))
    {
      struct sr_mountinfo e;
      const char *name;
      if (!sr_mountinfo_parse (l, &e)
          || !str_has_prefix (e.point, HOST_CGROUP_ROOT "/")
          || (strcmp (e.fstype, "cgroup") && strcmp (e.fstype, "cgroup2")))
        continue;
      name = e.point + strlen (HOST_CGROUP_ROOT "/");
      if (strchr (name, '/'))
        continue;
      if (mount_cgroup_v1_one (mt, dest, &e, self, o, err) < 0
          || cgroup_v1_aliases (dirfd, name, err) < 0)
        return sr_wrap (err, "%s", e.point);
    }
  if (o->flags & MS_RDONLY)
    return sr_mount_setattr_fd (dirfd, MOUNT_ATTR_RDONLY, 0, false, 0, err);
  return 0;
}

int
sr_cgroup_mount (const struct sr_cgroup_mounter *mt, const char *dest,
                 const char *source, const struct sr_mount_opts *o,
                 sr_error **err)
{
  struct statfs sf;

  if (statfs (HOST_CGROUP_ROOT, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
    return mount_cgroup2 (mt, dest, source, o, err);
  return mount_cgroup_v1 (mt, dest, o, err);
}
