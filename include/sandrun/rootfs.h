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

#endif
