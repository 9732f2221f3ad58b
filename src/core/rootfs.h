/* The container's filesystem, set up by the init in its new mount namespace.
 * Every path below the rootfs goes through safepath.h: the rootfs is
 * untrusted. */
#ifndef SANDRUN_ROOTFS_H
#define SANDRUN_ROOTFS_H

#include <stdbool.h>

#include "oci-spec/types.h"
#include "sandrun/error.h"
#include "core/idmap.h"

struct sr_rootfs_ctx
{
  const oci_config *cfg;
  const char *rootfs; /* absolute host path of root.path */
  const char *bundle; /* absolute: relative bind-mount sources start here */
  bool no_pivot;      /* --no-pivot: MS_MOVE + chroot (ramfs roots) */
  bool userns;        /* in a new user namespace: devices are bind-mounted */
  /* The idmapped mounts, made detached by the runtime (idmap.h): each fd is
   * taken (and set to -1) when its mount is attached.  NULL: none. */
  struct sr_mount_fds *mount_fds;
};

/* Before pivot_root: "/" made rslave (or rootfsPropagation; an unbindable
 * one waits for finalize, and a shared one makes the rootfs' parent mount
 * private), the rootfs bound onto itself, `mounts` applied in order, /dev
 * populated (default devices, linux.devices, /dev/fd & co symlinks,
 * /dev/ptmx, /dev/console with a terminal) unless /dev is a bind mount.
 *
 * Each mount target is opened under the rootfs (safepath) and mounted on by
 * fd; a mount that ends up outside the rootfs, or over a procfs file other
 * than runc's list (/proc/cpuinfo, /proc/meminfo, ... for lxcfs), is an
 * error.  Mount types: bind/rbind (host source, relative to the bundle),
 * "remount", "cgroup" (cgroup2 on a v2 host, else a tmpfs holding each v1
 * hierarchy the init belongs to: its own cgroup bound, or with a cgroup
 * namespace a fresh mount), sysfs and mqueue (in a user namespace that
 * cannot mount them: the host's /sys bound read-only, /dev/mqueue bound),
 * any other filesystem type with the options as its data.  An idmapped bind
 * (uidMappings, "idmap", "ridmap") is the detached mount of ctx->mount_fds,
 * attached and given its flags like any other bind.  With SELinux,
 * linux.mountLabel is the context= of each new filesystem but proc, sysfs,
 * cgroup and mqueue (its root labelled instead): sr_selinux_mount_data.
 * The init must already be in the container's cgroup. */
int sr_rootfs_prepare (const struct sr_rootfs_ctx *ctx, sr_error **err);

/* Switch the root: pivot_root(".", ".") and detach the old root (made rslave
 * first, so the detach does not reach the host), or with no_pivot, MS_MOVE
 * onto / and chroot.  The cwd is "/" afterwards, and the cached procfs
 * handle (the host's) is dropped: sr_procfs_reset. */
int sr_rootfs_pivot (const struct sr_rootfs_ctx *ctx, sr_error **err);

/* After the pivot: readonlyPaths (recursive ro,nosuid,nodev,noexec binds),
 * maskedPaths (the container's /dev/null, checked to be 1:3, bound over
 * files; a read-only tmpfs over directories; missing paths skipped), a
 * read-only /dev made read-only, root.readonly, rootfsPropagation. */
int sr_rootfs_finalize (const struct sr_rootfs_ctx *ctx, sr_error **err);

/* The propagation "/" gets before the mounts are made (MS_* flags):
 * rootfsPropagation, rslave when unset or unbindable (an unbindable one
 * waits for finalize).  A bind of a host mount is a slave of it then (or
 * what rootfsPropagation says), and so is an idmapped one (idmap.c). */
int sr_rootfs_mount_propagation (const oci_config *cfg, unsigned long *prop,
                                 sr_error **err);

/* The host path of a bind mount's source: absolute, or relative to
 * `bundle`.  NULL (an error) when the mount has no source. */
char *sr_bind_source (const oci_mount *m, const char *bundle, sr_error **err);

/* ---- steps of the module, called by the three above (dev.c, paths.c) ---- */

/* The linux.namespaces entry of `type` ("network", ...), NULL when absent. */
const oci_namespace *sr_config_namespace (const oci_config *cfg,
                                          const char *type);

/* Whether /dev is ours to populate: not when the config bind-mounts it. */
bool sr_dev_needs_setup (const oci_config *cfg);

/* Whether a mount destination names /dev ("/dev", "dev/", "//dev"). */
bool sr_dev_is_dev_path (const char *path);

/* After the pivot: a /dev mount the config wants read-only, which was
 * mounted writable for the nodes to be made, becomes read-only. */
int sr_dev_finalize (const oci_config *cfg, int rootfd, sr_error **err);

/* Populate /dev under rootfd (whose kernel path is rootpath): default
 * devices, linux.devices, the /dev/fd & co symlinks, /dev/ptmx and, with a
 * terminal, an empty /dev/console for the pty to be bound on. */
int sr_dev_setup (const struct sr_rootfs_ctx *ctx, int rootfd,
                  const char *rootpath, sr_error **err);

/* After the pivot, rootfd being "/": maskedPaths and readonlyPaths.  Paths
 * that do not exist are skipped. */
int sr_paths_mask (int rootfd, char *const *paths, sr_error **err);
int sr_paths_readonly (int rootfd, char *const *paths, sr_error **err);

#endif
