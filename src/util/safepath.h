/* Race-free path handling under an untrusted root.
 *
 * Every path below a container's rootfs is handled as (root fd, path): the
 * path is resolved as if root fd were "/", so ".." and symlinks (absolute or
 * relative) can never leave it.  openat2(RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS)
 * does the work; where the kernel (or a seccomp profile) lacks it, a
 * user-space walk one component at a time with O_NOFOLLOW, holding an fd for
 * each directory (".." pops back, never above the root; symlinks are read and
 * resolved in the root, 40 at most, then ELOOP), stands in.  The walk's result
 * is checked to be below the root's path (procfs), which catches a directory
 * renamed out of the root while we walked through it: it then fails with
 * EXDEV (a directory the walk created may be left there).  mkdir and mount
 * target creation always walk for the part that does not exist yet.
 *
 * Not thread-safe (the openat2 probe and procfs handle are plain statics). */
#ifndef SANDRUN_SAFEPATH_H
#define SANDRUN_SAFEPATH_H

#include <stdbool.h>
#include <sys/types.h>

#include "sandrun/error.h"

/* openat under root.  `path` may be absolute or relative (both mean "inside
 * root"); "" is ENOENT.  `flags` as for openat (O_CLOEXEC is always added);
 * with O_CREAT the parent must exist.  A symlink as the last component is
 * followed (in root) unless O_NOFOLLOW: then ELOOP, or the link itself with
 * O_PATH.  Magic links (procfs) are ELOOP.  Returns an fd or -1. */
int sr_open_in_root (int rootfd, const char *path, int flags, mode_t mode,
                     sr_error **err);

/* mkdir -p under root; returns an O_PATH|O_DIRECTORY fd of the last
 * directory.  A component that exists and is not a directory is ENOTDIR; a
 * symlink is resolved in root, a dangling one by creating its target there.
 * `mode` (less the umask) is that of every directory created. */
int sr_mkdir_in_root (int rootfd, const char *path, mode_t mode,
                      sr_error **err);

/* Ensure a mount target exists under root: a directory when `dir` is true,
 * else an empty regular file (O_CREAT|O_EXCL|O_NOFOLLOW, mode `mode`; parents
 * created as directories 0755).  An existing target of the other kind is an
 * error (ENOTDIR / EISDIR); any existing non-directory (a device node, a
 * socket) does as a file target.  A target that is a symlink is resolved in
 * root, never followed out.  Returns an O_PATH fd of the target: mount on
 * that fd (move_mount, or "/proc/self/fd/N"), never on the path again. */
int sr_ensure_target_in_root (int rootfd, const char *path, bool dir,
                              mode_t mode, sr_error **err);

/* Re-open an O_PATH fd with real access flags (through the verified procfs
 * handle, never a path lookup).  O_CREAT, O_EXCL and O_NOFOLLOW are ignored;
 * the result is checked to be the same inode.  (Implemented in procfs.c: the
 * one place a magic link is followed.) */
int sr_reopen_fd (int opath_fd, int flags, sr_error **err);

/* The kernel's idea of where an fd points ("/proc/self/fd/N" readlink through
 * the procfs handle), as seen from this process's root; malloc'd, NULL with
 * errno on failure. */
char *sr_fd_path (int fd);

/* True when the path of `fd` is `rootpath` or below it (whole components:
 * "/a/bc" is not below "/a/b"); false for non-files ("pipe:[...]"). */
bool sr_fd_is_beneath (int fd, const char *rootpath);

/* True when both fds are the same inode (st_dev and st_ino): for checking
 * that what was opened, mounted or created is still what is there. */
bool sr_fd_same_inode (int a, int b);

/* Testing hook: pretend openat2 does not exist (exercise the fallback).  It
 * affects sr_openat2 and so procfs.h too.  Either way the next call probes
 * for openat2 again. */
void sr_safepath_force_fallback (bool on);

/* openat2(2) as a raw syscall (`resolve`: RESOLVE_* flags), retrying the
 * transient EAGAIN of a concurrent rename.  Returns an fd or -1 with errno;
 * ENOSYS when the kernel (or a seccomp filter) does not offer openat2 or the
 * fallback is forced.  O_CLOEXEC is always added. */
int sr_openat2 (int dirfd, const char *path, int flags, mode_t mode,
                unsigned long long resolve);

#endif
