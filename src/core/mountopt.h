/* Mount options (config.json "mounts[].options", mount(8) names; mountopt.c)
 * and the primitives that apply them to a target opened under an untrusted
 * root (mount.c).
 *
 * Mounts are made with the new mount API (fsopen/fsmount, open_tree,
 * mount_setattr, move_mount) so a mount is fully configured before it becomes
 * visible and lands exactly on the opened target fd.  Kernels without
 * mount_setattr (< 5.12) get mount(2) onto the "/proc/self/fd/N" magic link of
 * the target instead. */
#ifndef SANDRUN_MOUNTOPT_H
#define SANDRUN_MOUNTOPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandrun/error.h"

struct sr_mount_opts
{
  unsigned long flags;       /* MS_* set: MS_RDONLY, MS_BIND, MS_REC, ... */
  unsigned long clear;       /* MS_* explicitly cleared: rw, suid, dev, ... */
  unsigned long propagation; /* MS_SHARED/SLAVE/PRIVATE/UNBINDABLE [|MS_REC] */
  uint64_t rec_set;          /* MOUNT_ATTR_* set with AT_RECURSIVE (rro, ...) */
  uint64_t rec_clr;          /* MOUNT_ATTR_* cleared with AT_RECURSIVE */
  char **data;               /* filesystem options in order ("size=64k") */
  bool copyup;               /* "tmpcopyup": fill the new filesystem with
                                what the target directory held */
  int idmap;                 /* "idmap" or "ridmap": SR_MOUNT_IDMAP[_REC] */
};

/* The idmap options: the mount is idmapped (idmap.h), its top mount only or
 * every mount of the tree (ridmap). */
#define SR_MOUNT_IDMAP 1
#define SR_MOUNT_IDMAP_REC 2

/* Parse an options vector (NULL is fine).  Unknown names are filesystem data;
 * crun's "idmap=uids=...;gids=..." form is refused (the mappings belong in
 * uidMappings and gidMappings), so is a comma inside one option, and so are
 * "idmap" and "ridmap" where the kernel lacks mount_setattr. */
int sr_mount_opts_parse (char *const *options, struct sr_mount_opts *out,
                         sr_error **err);
void sr_mount_opts_clear (struct sr_mount_opts *o);
/* The i-th name of the option table, NULL past the end, and whether the
 * parser accepts it on this kernel (for `sandrun features`; "idmap" says
 * whether idmapped mounts are supported). */
const char *sr_mount_opt_name (size_t i, bool *supported);
#define _cleanup_mount_opts_ __attribute__ ((cleanup (sr_mount_opts_clear)))

/* Whether a mount is a bind mount: "bind"/"rbind" among the options, or
 * the type "bind". */
bool sr_mount_opts_is_bind (const struct sr_mount_opts *o, const char *type);

/* The data string for mount(2): the data options joined with ","; NULL when
 * there are none. */
char *sr_mount_opts_data (const struct sr_mount_opts *o);

/* The non-recursive flags as MOUNT_ATTR_* bits for mount_setattr: `set` and
 * `clr` (clr includes MOUNT_ATTR__ATIME when an atime mode is chosen). */
void sr_mount_opts_attr (const struct sr_mount_opts *o, uint64_t *set,
                         uint64_t *clr);

/* mount(2) flags `flags` (ST_* of statvfs, or MS_*: the per-mount ones are
 * kept) changed by MOUNT_ATTR_* set/clr, for a bind remount without
 * mount_setattr. */
unsigned long sr_mount_attr_to_ms (unsigned long flags, uint64_t set,
                                   uint64_t clr);

/* A propagation name ("rslave", "private", ...) as MS_* flags; 0 when the
 * name is not one. */
unsigned long sr_propagation_parse (const char *name);

/* Where a mount goes: `fd` is the target, opened (O_PATH) under `rootfd` from
 * `path`.  `rootpath` is the root's path as the kernel reports it; when set,
 * the mount is verified to be beneath it once attached (a target renamed out
 * of the root meanwhile is refused, CVE-2021-30465).  After the pivot it is
 * NULL. */
struct sr_mount_at
{
  int rootfd;
  const char *path;
  int fd;
  const char *rootpath;
};

/* Mount a new filesystem `type` from `source` on the target with `o`
 * (flags, data, propagation, recursive attributes).  With o->copyup the
 * target directory's contents are copied into the detached filesystem
 * first (symlinks copied as links, nothing followed; needs the new API).
 * Returns an O_PATH fd of
 * the new mount's root, or -1. */
int sr_mount_fs_at (const struct sr_mount_at *t, const char *type,
                    const char *source, const struct sr_mount_opts *o,
                    sr_error **err);

/* Bind-mount (srcdirfd, srcpath) on the target: recursive with MS_REC in
 * o->flags, then the options applied to the new mount only.  srcpath "" with
 * a real fd binds that fd (AT_EMPTY_PATH).  Returns an O_PATH fd of the new
 * mount's root, or -1. */
int sr_mount_bind_at (const struct sr_mount_at *t, int srcdirfd,
                      const char *srcpath, const struct sr_mount_opts *o,
                      sr_error **err);

/* Attach the detached mount `mntfd` (a bind made beforehand, e.g. an
 * idmapped one; taken) on the target like sr_mount_bind_at: the flags of
 * `o` on it first, then the propagation and recursive attributes.  Needs
 * the new API.  Returns an O_PATH fd of the new mount's root, or -1. */
int sr_mount_detached_at (const struct sr_mount_at *t, int mntfd_owned,
                          const struct sr_mount_opts *o, sr_error **err);

/* "remount": change the mount whose root is the target.  Filesystem data
 * (not with "bind") is a superblock remount with mount(2), otherwise the
 * flags are applied with mount_setattr; then propagation and recursive
 * attributes. */
int sr_mount_remount_at (const struct sr_mount_at *t, const char *type,
                         const struct sr_mount_opts *o, sr_error **err);

/* Change the mount whose root is `mntfd`: MOUNT_ATTR_* set/clr (recursively
 * with `recursive`) and, if not 0, a propagation (MS_REC in it means
 * recursive). */
int sr_mount_setattr_fd (int mntfd, uint64_t set, uint64_t clr,
                         bool recursive, unsigned long propagation,
                         sr_error **err);

/* True when the running kernel has mount_setattr (and so the whole new mount
 * API); false also when forced off for testing. */
bool sr_mount_api_available (void);

/* Testing hook: use the mount(2) fallback even where the new API exists. */
void sr_mount_force_legacy (bool on);

#endif
