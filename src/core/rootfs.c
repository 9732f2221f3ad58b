/* The container's filesystem: propagation of "/", the mount list, the
 * switch of root.  Every target below the rootfs is opened with safepath and
 * mounted on by fd (mountopt.c); the rootfs is untrusted. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/cgroup/cgroup.h"
#include "core/linux_attrs.h"
#include "sandrun/log.h"
#include "core/mountopt.h"
#include "util/procfs.h"
#include "core/rootfs.h"
#include "util/safepath.h"
#include "sandrun/util.h"

/* Where the mounts of the list go. */
struct mount_env
{
  const struct sr_rootfs_ctx *ctx;
  int rootfd;
  const char *rootpath; /* the kernel's path of rootfd */
  const char *mount_label; /* linux.mountLabel to apply, or NULL */
};

const oci_namespace *
sr_config_namespace (const oci_config *cfg, const char *type)
{
  const oci_linux *lx = cfg->linux_;
  for (size_t i = 0; lx != NULL && i < lx->namespaces_len; i++)
    if (str_eq (lx->namespaces[i].type, type))
      return &lx->namespaces[i];
  return NULL;
}

static bool
has_new_namespace (const oci_config *cfg, const char *type)
{
  const oci_namespace *ns = sr_config_namespace (cfg, type);
  return ns != NULL && ns->path == NULL;
}

static int
root_propagation (const oci_config *cfg, unsigned long *out, sr_error **err)
{
  const char *name = cfg->linux_ ? cfg->linux_->rootfs_propagation : NULL;

  *out = 0;
  if (name == NULL || *name == '\0')
    return 0;
  *out = sr_propagation_parse (name);
  if (*out == 0)
    return sr_fail (err, EINVAL, "rootfsPropagation \"%s\": not a "
                    "propagation type", name);
  return 0;
}

static int
mnt_id_of (const char *path, uint64_t *id, sr_error **err)
{
  struct statx stx;
  if (statx (AT_FDCWD, path, 0, STATX_MNT_ID, &stx) < 0)
    return sr_fail (err, errno, "statx \"%s\"", path);
  *id = stx.stx_mnt_id;
  return 0;
}

static char *
parent_dir (const char *path)
{
  const char *slash = strrchr (path, '/');
  if (slash == NULL || slash == path)
    return xstrdup ("/");
  return xstrndup (path, slash - path);
}

/* pivot_root refuses a new root whose parent mount is shared, and a bind
 * under a shared mount propagates out: the mount that holds the rootfs'
 * parent directory is made private.  Found by walking up while the mount
 * id stays the same. */
static int
rootfs_parent_private (const char *rootfs, sr_error **err)
{
  _cleanup_free_ char *dir = parent_dir (rootfs);
  uint64_t id, up_id;

  if (mnt_id_of (dir, &id, err) < 0)
    return -1;
  while (strcmp (dir, "/") != 0)
    {
      _cleanup_free_ char *up = parent_dir (dir);
      if (mnt_id_of (up, &up_id, err) < 0)
        return -1;
      if (up_id != id)
        break;
      free (dir);
      dir = steal_pointer (&up);
    }
  if (mount (NULL, dir, NULL, MS_PRIVATE, NULL) < 0)
    return sr_fail (err, errno, "make \"%s\" private", dir);
  return 0;
}

/* "/" is made rslave (or what rootfsPropagation says) so nothing we mount
 * reaches the host, then rootfsPropagation is applied again after the pivot
 * (as runc does); then the rootfs is bound onto itself: pivot_root needs
 * a mount point. */
int
sr_rootfs_mount_propagation (const oci_config *cfg, unsigned long *prop,
                             sr_error **err)
{
  if (root_propagation (cfg, prop, err) < 0)
    return -1;
  /* Unbindable host mounts could not be bound into the rootfs: that one
   * waits for finalize. */
  if (*prop == 0 || (*prop & MS_UNBINDABLE))
    *prop = MS_SLAVE | MS_REC;
  return 0;
}

static int
prepare_root_mount (const char *rootfs, const oci_config *cfg, sr_error **err)
{
  unsigned long prop;

  if (sr_rootfs_mount_propagation (cfg, &prop, err) < 0)
    return -1;
  if (mount (NULL, "/", NULL, prop, NULL) < 0)
    return sr_fail (err, errno, "set the propagation of \"/\"");
  if (prop != (MS_SLAVE | MS_REC) && prop != (MS_PRIVATE | MS_REC)
      && rootfs_parent_private (rootfs, err) < 0)
    return -1;
  if (mount (rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    return sr_fail (err, errno, "bind \"%s\" onto itself", rootfs);
  return 0;
}

/* ---- one entry of `mounts` ----------------------------------------------- */

/* Files under /proc that may be mounted over (runc's list: lxcfs and the
 * like), besides /proc/pressure/. */
static const char *const proc_mountable[] = {
  "/proc/cpuinfo", "/proc/diskstats", "/proc/meminfo", "/proc/stat",
  "/proc/swaps", "/proc/uptime", "/proc/loadavg", "/proc/slabinfo",
  "/proc/net/dev", "/proc/sys/kernel/ns_last_pid",
};

/* A mount over procfs could hide or redirect what the kernel shows or what
 * the runtime writes (CVE-2019-16884 class): only a proc at /proc, or the
 * files above. */
static int
check_proc_target (const struct mount_env *env, int target, const char *type,
                   sr_error **err)
{
  _cleanup_free_ char *where = NULL;
  const char *rel;
  size_t n = strlen (env->rootpath);

  if (!sr_fd_on_procfs (target))
    return 0;
  where = sr_fd_path (target);
  if (where == NULL)
    return sr_fail (err, errno, "path of the target");
  rel = where;
  if (strcmp (env->rootpath, "/") != 0
      && strncmp (where, env->rootpath, n) == 0)
    rel = where + n;
  if ((str_eq (type, "proc") && strcmp (rel, "/proc") == 0)
      || str_has_prefix (rel, "/proc/pressure/"))
    return 0;
  for (size_t i = 0; i < ARRAY_SIZE (proc_mountable); i++)
    if (strcmp (rel, proc_mountable[i]) == 0)
      return 0;
  return sr_fail (err, EPERM, "\"%s\" is on procfs, where only a few files "
                  "may be mounted over", rel);
}

static bool
same_inode (int a, int b)
{
  struct stat sa, sb;
  return fstat (a, &sa) == 0 && fstat (b, &sb) == 0 && sa.st_dev == sb.st_dev
         && sa.st_ino == sb.st_ino;
}

/* The mount target, created when missing; refused on procfs or when it is
 * the root itself (the mounts after it would land beneath it, unseen). */
static int
open_target (const struct mount_env *env, const char *dest, bool dir,
             const char *type, sr_error **err)
{
  _cleanup_close_ int fd = sr_ensure_target_in_root (env->rootfd, dest, dir,
                                                     dir ? 0755 : 0644, err);
  if (fd < 0 || check_proc_target (env, fd, type, err) < 0)
    return -1;
  if (same_inode (fd, env->rootfd))
    return sr_fail (err, EINVAL, "the target is the rootfs itself");
  return steal_fd (&fd);
}

static int
mount_new_fs (const struct mount_env *env, const char *dest, const char *type,
              const char *source, const struct sr_mount_opts *o,
              sr_error **err)
{
  _cleanup_close_ int target = -1;
  _cleanup_close_ int mnt = -1;
  _cleanup_strv_ char **labelled = sr_selinux_mount_data (o->data, type,
                                                          env->mount_label);
  struct sr_mount_opts lo = *o;

  if (labelled != NULL)
    lo.data = labelled;
  target = open_target (env, dest, true, type, err);
  if (target < 0)
    return -1;
  struct sr_mount_at t = { env->rootfd, dest, target, env->rootpath };
  mnt = sr_mount_fs_at (&t, type, source, &lo, err);
  if (mnt < 0
      || sr_selinux_label_mount_root (mnt, type, env->mount_label, err) < 0)
    return -1;
  return 0;
}

/* The target of a bind of `srcfd`: a directory or a file, as the source
 * is (pinned by fd: the kind checked is the kind bound). */
static int
open_bind_target (const struct mount_env *env, const char *dest, int srcfd,
                  const char *src, sr_error **err)
{
  struct stat st;

  if (fstat (srcfd, &st) < 0)
    return sr_fail (err, errno, "source \"%s\"", src);
  return open_target (env, dest, S_ISDIR (st.st_mode), NULL, err);
}

/* Bind a host path (trusted: it comes from config.json) onto dest. */
static int
mount_host_path (const struct mount_env *env, const char *dest,
                 const char *src, const struct sr_mount_opts *o,
                 sr_error **err)
{
  _cleanup_close_ int srcfd = open (src, O_PATH | O_CLOEXEC);
  _cleanup_close_ int target = -1;
  _cleanup_close_ int mnt = -1;

  if (srcfd < 0)
    return sr_fail (err, errno, "source \"%s\"", src);
  target = open_bind_target (env, dest, srcfd, src, err);
  if (target < 0)
    return -1;
  struct sr_mount_at t = { env->rootfd, dest, target, env->rootpath };
  mnt = sr_mount_bind_at (&t, srcfd, "", o, err);
  return mnt < 0 ? -1 : 0;
}

char *
sr_bind_source (const oci_mount *m, const char *bundle, sr_error **err)
{
  if (m->source == NULL || *m->source == '\0')
    return sr_fail (err, EINVAL, "bind mount without a source"), NULL;
  if (m->source[0] == '/' || bundle == NULL)
    return xstrdup (m->source);
  return xasprintf ("%s/%s", bundle, m->source);
}

static int
mount_bind (const struct mount_env *env, const oci_mount *m,
            const struct sr_mount_opts *o, sr_error **err)
{
  _cleanup_free_ char *src = sr_bind_source (m, env->ctx->bundle, err);

  if (src == NULL)
    return -1;
  return mount_host_path (env, m->destination, src, o, err);
}

/* An idmapped bind: the detached mount the runtime made (`mntfd`, taken),
 * attached onto dest like any other bind. */
static int
mount_idmapped (const struct mount_env *env, const oci_mount *m, int mntfd,
                const struct sr_mount_opts *o, sr_error **err)
{
  _cleanup_close_ int fd = mntfd;
  _cleanup_close_ int target = -1;
  _cleanup_close_ int mnt = -1;
  const char *src = m->source ? m->source : "";

  if (fd < 0)
    return sr_fail (err, EINVAL, "the idmapped mount of \"%s\" was not "
                    "prepared", src);
  target = open_bind_target (env, m->destination, fd, src, err);
  if (target < 0)
    return -1;
  struct sr_mount_at t = { env->rootfd, m->destination, target,
                           env->rootpath };
  mnt = sr_mount_detached_at (&t, steal_fd (&fd), o, err);
  return mnt < 0 ? -1 : 0;
}

static int
mount_remount (const struct mount_env *env, const oci_mount *m,
               const struct sr_mount_opts *o, sr_error **err)
{
  _cleanup_close_ int target = -1;
  _cleanup_close_ int mnt = -1;

  target = sr_open_in_root (env->rootfd, m->destination, O_PATH, 0, err);
  if (target < 0 || check_proc_target (env, target, m->type, err) < 0)
    return -1;
  struct sr_mount_at t = { env->rootfd, m->destination, target,
                           env->rootpath };
  mnt = sr_mount_remount_at (&t, m->type, o, err);
  return mnt < 0 ? -1 : 0;
}

/* sysfs belongs to the network namespace and mqueue to the ipc one: a user
 * namespace without its own cannot mount them.  The host's, bound read-only
 * for sysfs (as crun does) and as asked for mqueue (as runc does), stands
 * in. */
static int
mount_or_bind_host (const struct mount_env *env, const oci_mount *m,
                    const struct sr_mount_opts *o, const char *host,
                    sr_error **err)
{
  _cleanup_error_ sr_error *first = NULL;
  struct sr_mount_opts bind = { .flags = MS_BIND | MS_REC };
  uint64_t clr;

  if (mount_new_fs (env, m->destination, m->type, m->source, o, &first) == 0)
    return 0;
  if (!env->ctx->userns || first->errnum != EPERM)
    {
      *err = steal_pointer (&first);
      return -1;
    }
  sr_debug ("%s at \"%s\": %s; binding the host's %s", m->type,
            m->destination, first->msg, host);
  bind.flags |= o->flags & (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC);
  if (strcmp (m->type, "sysfs") == 0)
    bind.flags |= MS_RDONLY;
  if (sr_mount_api_available ())
    {
      sr_mount_opts_attr (&bind, &bind.rec_set, &clr);
      bind.rec_set &= ~(uint64_t) MOUNT_ATTR__ATIME;
    }
  return mount_host_path (env, m->destination, host, &bind, err);
}

static int
mount_proc (const struct mount_env *env, const oci_mount *m,
            const struct sr_mount_opts *o, sr_error **err)
{
  if (mount_new_fs (env, m->destination, m->type, m->source, o, err) == 0)
    return 0;
  if (env->ctx->userns && err && *err && (*err)->errnum == EPERM)
    sr_wrap (err, "a user namespace mounts proc only where the host's /proc "
             "is fully visible (no mounts over its files)");
  return -1;
}

/* ---- cgroup mounts (cgroup/mount.c) ------------------------------------- */

static int
cg_new_fs (void *env, const char *dest, const char *type, const char *source,
           const struct sr_mount_opts *o, sr_error **err)
{
  return mount_new_fs (env, dest, type, source, o, err);
}

static int
cg_bind_host (void *env, const char *dest, const char *src,
              const struct sr_mount_opts *o, sr_error **err)
{
  return mount_host_path (env, dest, src, o, err);
}

static int
mount_cgroup (const struct mount_env *env, const oci_mount *m,
              const struct sr_mount_opts *o, sr_error **err)
{
  const struct sr_cgroup_mounter mt = {
    .env = (void *) env,
    .new_fs = cg_new_fs,
    .bind_host = cg_bind_host,
    .rootfd = env->rootfd,
    .cgroupns = has_new_namespace (env->ctx->cfg, "cgroup"),
  };
  return sr_cgroup_mount (&mt, m->destination, m->source, o, err);
}

/* One entry of `mounts`; `mntfd` (taken) is its idmapped mount, if the
 * runtime made one. */
static int
do_mount (const struct mount_env *env, const oci_mount *m, int mntfd,
          sr_error **err)
{
  _cleanup_mount_opts_ struct sr_mount_opts o = { 0 };
  _cleanup_close_ int idmapped = mntfd;
  const char *type = m->type;

  if (m->destination == NULL || *m->destination == '\0')
    return sr_fail (err, EINVAL, "mount without a destination");
  if (sr_mount_opts_parse (m->options, &o, err) < 0)
    return sr_wrap (err, "mount \"%s\"", m->destination);
  if (sr_idmap_mount_wanted (m, &o))
    {
      if (mount_idmapped (env, m, steal_fd (&idmapped), &o, err) < 0)
        return sr_wrap (err, "mount \"%s\" (idmapped bind \"%s\")",
                        m->destination, m->source ? m->source : "");
      return 0;
    }

  if (o.flags & MS_REMOUNT)
    {
      if (mount_remount (env, m, &o, err) < 0)
        return sr_wrap (err, "remount \"%s\"", m->destination);
      return 0;
    }
  if (sr_mount_opts_is_bind (&o, type))
    {
      if (mount_bind (env, m, &o, err) < 0)
        return sr_wrap (err, "mount \"%s\" (bind \"%s\")", m->destination,
                        m->source ? m->source : "");
      return 0;
    }
  if (type == NULL || *type == '\0')
    return sr_fail (err, EINVAL, "mount \"%s\": no type and not a bind mount",
                    m->destination);

  int r;
  /* Made read-only in finalize, once its nodes exist. */
  if (sr_dev_is_dev_path (m->destination))
    o.flags &= ~MS_RDONLY;
  if (strcmp (type, "cgroup") == 0)
    r = mount_cgroup (env, m, &o, err);
  else if (strcmp (type, "sysfs") == 0)
    r = mount_or_bind_host (env, m, &o, "/sys", err);
  else if (strcmp (type, "mqueue") == 0)
    r = mount_or_bind_host (env, m, &o, "/dev/mqueue", err);
  else if (strcmp (type, "proc") == 0)
    r = mount_proc (env, m, &o, err);
  else
    r = mount_new_fs (env, m->destination, type, m->source, &o, err);
  if (r < 0)
    return sr_wrap (err, "mount \"%s\" (type %s)", m->destination, type);
  return 0;
}

/* ---- the API ------------------------------------------------------------- */

static char *
rootfs_realpath (const struct sr_rootfs_ctx *ctx, sr_error **err)
{
  char *p;

  if (ctx->rootfs == NULL)
    return sr_fail (err, EINVAL, "no root path"), NULL;
  p = realpath (ctx->rootfs, NULL);
  if (p == NULL)
    sr_fail (err, errno, "rootfs \"%s\"", ctx->rootfs);
  else if (strcmp (p, "/") == 0)
    {
      sr_fail (err, EINVAL, "rootfs \"%s\": the host's root cannot be the "
               "container's", ctx->rootfs);
      free (p);
      p = NULL;
    }
  return p;
}

int
sr_rootfs_prepare (const struct sr_rootfs_ctx *ctx, sr_error **err)
{
  _cleanup_free_ char *rootfs = rootfs_realpath (ctx, err);
  _cleanup_free_ char *rootpath = NULL;
  _cleanup_close_ int rootfd = -1;
  const oci_config *cfg = ctx->cfg;

  if (rootfs == NULL || prepare_root_mount (rootfs, cfg, err) < 0)
    return -1;
  rootfd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return sr_fail (err, errno, "open rootfs \"%s\"", rootfs);
  rootpath = sr_fd_path (rootfd);
  if (rootpath == NULL)
    return sr_fail (err, errno, "path of rootfs \"%s\"", rootfs);

  struct mount_env env = { ctx, rootfd, rootpath,
                           sr_selinux_mount_label (cfg) };
  struct sr_mount_fds *fds = ctx->mount_fds;
  for (size_t i = 0; i < cfg->mounts_len; i++)
    if (do_mount (&env, &cfg->mounts[i],
                  fds && i < fds->len ? steal_fd (&fds->fds[i]) : -1, err)
        < 0)
      return -1;
  if (sr_dev_needs_setup (cfg)
      && sr_dev_setup (ctx, rootfd, rootpath, err) < 0)
    return -1;
  return 0;
}

static int
pivot_move (const char *rootfs, sr_error **err)
{
  if (mount (rootfs, "/", NULL, MS_MOVE, NULL) < 0)
    return sr_fail (err, errno, "move \"%s\" to \"/\"", rootfs);
  if (chroot (".") < 0)
    return sr_fail (err, errno, "chroot \"%s\"", rootfs);
  return 0;
}

/* pivot_root(".", "."): the old root ends up stacked on the new one, where
 * it is detached (after becoming rslave, so the detach does not reach the
 * host) without ever needing a directory for it inside the rootfs. */
static int
pivot_dot (sr_error **err)
{
  _cleanup_close_ int oldroot = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

  if (oldroot < 0)
    return sr_fail (err, errno, "open \"/\"");
  if (syscall (SYS_pivot_root, ".", ".") < 0)
    return sr_fail (err, errno, "pivot_root");
  if (fchdir (oldroot) < 0)
    return sr_fail (err, errno, "chdir to the old root");
  if (mount (NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
    return sr_fail (err, errno, "make the old root rslave");
  if (umount2 (".", MNT_DETACH) < 0)
    return sr_fail (err, errno, "detach the old root");
  return 0;
}

int
sr_rootfs_pivot (const struct sr_rootfs_ctx *ctx, sr_error **err)
{
  _cleanup_free_ char *rootfs = rootfs_realpath (ctx, err);
  _cleanup_close_ int newroot = -1;

  if (rootfs == NULL)
    return -1;
  newroot = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (newroot < 0 || fchdir (newroot) < 0)
    return sr_fail (err, errno, "chdir \"%s\"", rootfs);
  if ((ctx->no_pivot ? pivot_move (rootfs, err) : pivot_dot (err)) < 0)
    return -1;
  if (chdir ("/") < 0)
    return sr_fail (err, errno, "chdir \"/\"");
  /* The cached procfs handle belongs to the old root: the next user opens
   * the container's. */
  sr_procfs_reset ();
  return 0;
}

int
sr_rootfs_finalize (const struct sr_rootfs_ctx *ctx, sr_error **err)
{
  const oci_config *cfg = ctx->cfg;
  const oci_linux *lx = cfg->linux_;
  _cleanup_close_ int rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  unsigned long prop;

  if (rootfd < 0)
    return sr_fail (err, errno, "open \"/\"");
  if (root_propagation (cfg, &prop, err) < 0)
    return -1;
  /* Read-only first, then masks: a mask inside a read-only path stays. */
  if (lx && sr_paths_readonly (rootfd, lx->readonly_paths, err) < 0)
    return -1;
  if (lx && sr_paths_mask (rootfd, lx->masked_paths, err) < 0)
    return -1;
  if (sr_dev_finalize (cfg, rootfd, err) < 0)
    return -1;
  if (cfg->root && cfg->root->readonly
      && sr_mount_setattr_fd (rootfd, MOUNT_ATTR_RDONLY, 0, false, 0, err) < 0)
    return sr_wrap (err, "remount \"/\" read-only");
  if (prop && sr_mount_setattr_fd (rootfd, 0, 0, false, prop, err) < 0)
    return sr_wrap (err, "rootfsPropagation");
  return 0;
}
