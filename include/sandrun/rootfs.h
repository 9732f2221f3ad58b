/* The container's filesystem, set up by the init in its new mount namespace.
 * Every path below the rootfs goes through safepath.h: the rootfs is
 * untrusted. */
#ifndef SANDRUN_ROOTFS_H
#define SANDRUN_ROOTFS_H

#include <stdbool.h>

#include "oci-spec/types.h"
#include "sandrun/error.h"

struct sr_rootfs_ctx
{
  const oci_config *cfg;
  const char *rootfs; /* absolute host path of root.path */
  const char *bundle; /* absolute: relative bind-mount sources start here */
  bool no_pivot;      /* --no-pivot: MS_MOVE + chroot (ramfs roots) */
  bool userns;        /* in a new user namespace: devices are bind-mounted */
};

/* Before pivot_root: "/" made rslave (or private), the rootfs bound onto
 * itself, `mounts` applied in order, /dev populated (default devices,
 * linux.devices, /dev/fd & co symlinks, /dev/ptmx), all beneath the rootfs. */
int sr_rootfs_prepare (const struct sr_rootfs_ctx *ctx, sr_error **err);

/* Switch the root: pivot_root(2) and detach the old root, or with no_pivot,
 * MS_MOVE onto / and chroot.  The cwd is "/" afterwards. */
int sr_rootfs_pivot (const struct sr_rootfs_ctx *ctx, sr_error **err);

/* After the pivot: maskedPaths, readonlyPaths, root.readonly, and
 * rootfsPropagation. */
int sr_rootfs_finalize (const struct sr_rootfs_ctx *ctx, sr_error **err);

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
