/* The root a sandbox sees: by default a small tmpfs skeleton whose system
 * directories and allow-listed /etc files are read-only binds of the
 * host's (made by the container's mounts, see policy.c), with a generated
 * passwd, group and hosts; with --rootfs, the caller's directory under a
 * tmpfs overlay that only adds the mount points. */
#ifndef SANDRUN_SANDBOX_ROOTFS_H
#define SANDRUN_SANDBOX_ROOTFS_H

#include "bundle.h"
#include "options.h"

/* The host's system directories and the allow-listed files of /etc. */
extern const char *const sb_host_dirs[];
extern const char *const sb_host_etc[];

/* Make b->rootfs (DIR/root) and fill b->host_paths. */
int sb_rootfs_make (const struct sb_options *o, struct sb_bundle *b,
                    sr_error **err);

#endif
