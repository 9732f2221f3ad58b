/* /dev of the container: the default devices, linux.devices, the standard
 * symlinks, /dev/ptmx and the /dev/console placeholder.  The parent of every
 * node is opened with safepath and the node is made relative to that fd, with
 * nothing followed: a planted /dev/null -> /etc/passwd is replaced, never
 * written through (CVE-2025-31133 class). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sandrun/log.h"
#include "core/mountopt.h"
#include "core/rootfs.h"
#include "util/safepath.h"
#include "sandrun/util.h"

struct dev_node
{
  const char *path;
  mode_t type; /* S_IFCHR, S_IFBLK, S_IFIFO */
  unsigned major, minor;
  mode_t mode;
  uid_t uid;
  gid_t gid;
};

/* config-linux.md "Default Devices". */
static const struct dev_node default_devices[] = {
  { "/dev/null", S_IFCHR, 1, 3, 0666, 0, 0 },
  { "/dev/zero", S_IFCHR, 1, 5, 0666, 0, 0 },
  { "/dev/full", S_IFCHR, 1, 7, 0666, 0, 0 },
  { "/dev/random", S_IFCHR, 1, 8, 0666, 0, 0 },
  { "/dev/urandom", S_IFCHR, 1, 9, 0666, 0, 0 },
  { "/dev/tty", S_IFCHR, 5, 0, 0666, 0, 0 },
};

static const struct
{
  const char *name, *target;
} dev_symlinks[] = {
  { "fd", "/proc/self/fd" },
  { "stdin", "/proc/self/fd/0" },
  { "stdout", "/proc/self/fd/1" },
  { "stderr", "/proc/self/fd/2" },
};

/* "/dev", "dev/", "//dev" */
bool
sr_dev_is_dev_path (const char *p)
{
  while (*p == '/')
    p++;
  if (strncmp (p, "dev", 3) != 0)
    return false;
  for (p += 3; *p == '/'; p++)
    ;
  return *p == '\0';
}

bool
sr_dev_needs_setup (const oci_config *cfg)
{
  for (size_t i = 0; i < cfg->mounts_len; i++)
    {
      const oci_mount *m = &cfg->mounts[i];
      _cleanup_mount_opts_ struct sr_mount_opts o = { 0 };
      if (m->destination == NULL || !sr_dev_is_dev_path (m->destination))
        continue;
      if (sr_mount_opts_parse (m->options, &o, NULL) == 0
          && sr_mount_opts_is_bind (&o, m->type))
        return false;
    }
  return true;
}

/* Split "/dev/net/tun" into its parent, opened (created) in the root, and
 * its last name, which must be a plain name. */
static int
open_parent (int rootfd, const char *path, const char **base, sr_error **err)
{
  size_t len = strlen (path);
  while (len > 1 && path[len - 1] == '/')
    len--;
  const char *slash = memrchr (path, '/', len);
  const char *name = slash ? slash + 1 : path;
  size_t nlen = len - (size_t) (name - path);
  _cleanup_free_ char *parent = slash ? xstrndup (path, (size_t) (slash - path))
                                      : xstrdup ("/");

  if (nlen == 0 || (nlen == 1 && name[0] == '.')
      || (nlen == 2 && strncmp (name, "..", 2) == 0) || name[nlen] != '\0')
    return sr_fail (err, EINVAL, "not a file name");
  *base = name;
  return sr_mkdir_in_root (rootfd, *parent ? parent : "/", 0755, err);
}

/* Make room for the node: a device of the same kind may go, as may anything
 * but a directory when `replace` (default devices); otherwise the spec wants
 * an error.  Returns 1 when the same device is there and cannot go because
 * something is mounted on it (a bind of the host's node): it stays. */
static int
clear_place (int dirfd, const char *name, const struct dev_node *d,
             bool replace, sr_error **err)
{
  struct stat st;

  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : sr_fail (err, errno, "stat");
  bool same = (st.st_mode & S_IFMT) == d->type
              && (d->type == S_IFIFO
                  || st.st_rdev == makedev (d->major, d->minor));
  if (S_ISDIR (st.st_mode) || (!same && !replace))
    return sr_fail (err, EEXIST, "exists and is not the requested device");
  if (unlinkat (dirfd, name, 0) == 0)
    return 0;
  if (errno == EBUSY && same)
    return 1;
  return sr_fail (err, errno, "remove the existing file");
}

static int
mknod_node (int dirfd, const char *name, const struct dev_node *d,
            sr_error **err)
{
  /* umask would change the mode; chmod afterwards would follow links. */
  mode_t old = umask (0);
  int r = mknodat (dirfd, name, d->type | (d->mode & 07777),
                   makedev (d->major, d->minor));
  umask (old);
  if (r < 0)
    return sr_fail (err, errno, "mknod");
  if (fchownat (dirfd, name, d->uid, d->gid, AT_SYMLINK_NOFOLLOW) < 0)
    return sr_fail (err, errno, "chown");
  return 0;
}

/* In a user namespace mknod is not allowed: the host's node is bound onto
 * an empty file. */
static int
bind_node (int rootfd, const char *rootpath, int dirfd, const char *name,
           const struct dev_node *d, sr_error **err)
{
  _cleanup_close_ int target = openat (dirfd, name, O_WRONLY | O_CREAT | O_EXCL
                                       | O_NOFOLLOW | O_CLOEXEC, 0644);
  _cleanup_close_ int mnt = -1;
  struct sr_mount_opts o = { .flags = MS_BIND };

  if (target < 0)
    return sr_fail (err, errno, "create the bind target");
  struct sr_mount_at t = { rootfd, d->path, target, rootpath };
  mnt = sr_mount_bind_at (&t, AT_FDCWD, d->path, &o, err);
  return mnt < 0 ? -1 : 0;
}

static int
make_node (const struct sr_rootfs_ctx *ctx, int rootfd, const char *rootpath,
           const struct dev_node *d, bool replace, sr_error **err)
{
  _cleanup_close_ int dirfd = -1;
  const char *name = NULL;
  int r;

  dirfd = open_parent (rootfd, d->path, &name, err);
  if (dirfd < 0 || (r = clear_place (dirfd, name, d, replace, err)) < 0)
    r = -1;
  else if (r > 0)
    r = 0;
  else if (ctx->userns)
    r = bind_node (rootfd, rootpath, dirfd, name, d, err);
  else
    r = mknod_node (dirfd, name, d, err);
  if (r < 0)
    return sr_wrap (err, "device \"%s\"", d->path);
  return 0;
}

static int
config_node (const oci_device *cd, struct dev_node *d, sr_error **err)
{
  const char *t = cd->type ? cd->type : "";

  if (cd->path == NULL)
    return sr_fail (err, EINVAL, "device without a path");
  if (strcmp (t, "c") == 0 || strcmp (t, "u") == 0)
    d->type = S_IFCHR;
  else if (strcmp (t, "b") == 0)
    d->type = S_IFBLK;
  else if (strcmp (t, "p") == 0)
    d->type = S_IFIFO;
  else
    return sr_fail (err, EINVAL, "device \"%s\": unknown type \"%s\"",
                    cd->path, t);
  if (d->type != S_IFIFO
      && (cd->major < 0 || cd->minor < 0 || cd->major > 0xfff
          || cd->minor > 0xfffff))
    return sr_fail (err, EINVAL, "device \"%s\": bad number %lld:%lld",
                    cd->path, (long long) cd->major, (long long) cd->minor);
  d->path = cd->path;
  d->major = d->type == S_IFIFO ? 0 : (unsigned) cd->major;
  d->minor = d->type == S_IFIFO ? 0 : (unsigned) cd->minor;
  d->mode = cd->file_mode.set ? (cd->file_mode.value & 07777) : 0666;
  d->uid = cd->uid.set ? cd->uid.value : 0;
  d->gid = cd->gid.set ? cd->gid.value : 0;
  return 0;
}

static bool
config_has_device (const oci_config *cfg, const char *path)
{
  const oci_linux *lx = cfg->linux_;
  for (size_t i = 0; lx != NULL && i < lx->devices_len; i++)
    if (str_eq (lx->devices[i].path, path))
      return true;
  return false;
}

static int
make_devices (const struct sr_rootfs_ctx *ctx, int rootfd,
              const char *rootpath, sr_error **err)
{
  const oci_linux *lx = ctx->cfg->linux_;

  for (size_t i = 0; i < ARRAY_SIZE (default_devices); i++)
    if (!config_has_device (ctx->cfg, default_devices[i].path)
        && make_node (ctx, rootfd, rootpath, &default_devices[i], true,
                      err) < 0)
      return -1;
  for (size_t i = 0; lx != NULL && i < lx->devices_len; i++)
    {
      struct dev_node d;
      if (config_node (&lx->devices[i], &d, err) < 0
          || make_node (ctx, rootfd, rootpath, &d, false, err) < 0)
        return -1;
    }
  return 0;
}

static int
make_symlink (int devfd, const char *name, const char *target, bool replace,
              sr_error **err)
{
  if (replace && unlinkat (devfd, name, 0) < 0 && errno != ENOENT)
    return sr_fail (err, errno, "remove \"/dev/%s\"", name);
  if (symlinkat (target, devfd, name) < 0 && errno != EEXIST)
    return sr_fail (err, errno, "symlink \"/dev/%s\"", name);
  return 0;
}

static int
make_links (int devfd, sr_error **err)
{
  for (size_t i = 0; i < ARRAY_SIZE (dev_symlinks); i++)
    if (make_symlink (devfd, dev_symlinks[i].name, dev_symlinks[i].target,
                      false, err) < 0)
      return -1;
  if (access ("/proc/kcore", F_OK) == 0
      && make_symlink (devfd, "core", "/proc/kcore", false, err) < 0)
    return -1;
  /* The devpts instance of the container has its own ptmx. */
  return make_symlink (devfd, "ptmx", "pts/ptmx", true, err);
}

/* An empty file for the terminal code to bind the pty onto. */
static int
make_console (int devfd, sr_error **err)
{
  struct stat st;
  int fd;

  if (fstatat (devfd, "console", &st, AT_SYMLINK_NOFOLLOW) == 0
      && !S_ISREG (st.st_mode) && unlinkat (devfd, "console", 0) < 0)
    return sr_fail (err, errno, "remove \"/dev/console\"");
  fd = openat (devfd, "console", O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
               0666);
  if (fd < 0)
    return sr_fail (err, errno, "create \"/dev/console\"");
  sr_close (fd);
  return 0;
}

int
sr_dev_setup (const struct sr_rootfs_ctx *ctx, int rootfd,
              const char *rootpath, sr_error **err)
{
  _cleanup_close_ int devfd = sr_mkdir_in_root (rootfd, "/dev", 0755, err);
  const oci_process *proc = ctx->cfg->process;

  if (devfd < 0)
    return -1;
  if (make_devices (ctx, rootfd, rootpath, err) < 0
      || make_links (devfd, err) < 0)
    return -1;
  if (proc && proc->terminal && make_console (devfd, err) < 0)
    return -1;
  return 0;
}

/* A read-only /dev was mounted writable for the nodes to be made: now it
 * becomes what the config asked (as runc does). */
int
sr_dev_finalize (const oci_config *cfg, int rootfd, sr_error **err)
{
  for (size_t i = 0; i < cfg->mounts_len; i++)
    {
      const oci_mount *m = &cfg->mounts[i];
      _cleanup_mount_opts_ struct sr_mount_opts o = { 0 };
      _cleanup_close_ int fd = -1;

      if (m->destination == NULL || !sr_dev_is_dev_path (m->destination)
          || sr_mount_opts_parse (m->options, &o, NULL) < 0
          || sr_mount_opts_is_bind (&o, m->type) || !(o.flags & MS_RDONLY))
        continue;
      fd = sr_open_in_root (rootfd, "/dev", O_PATH | O_DIRECTORY, 0, err);
      if (fd < 0
          || sr_mount_setattr_fd (fd, MOUNT_ATTR_RDONLY, 0, false, 0, err) < 0)
        return sr_wrap (err, "remount \"/dev\" read-only");
    }
  return 0;
}
