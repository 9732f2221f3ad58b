/* Race-free path handling under an untrusted root.
 *
 * Every path below a container's rootfs is handled as (root fd, path): the
 * path is resolved as if root fd were "/", so ".." and symlinks (absolute or
 * relative) can never leave it.  openat2(RESOLVE_IN_ROOT) does the work; where
 * the kernel lacks it, a user-space walk one component at a time with
 * O_NOFOLLOW, verified afterwards, stands in. */
#ifndef SANDRUN_SAFEPATH_H
#define SANDRUN_SAFEPATH_H

#include <stdbool.h>
#include <sys/types.h>

#include "sandrun/error.h"

/* openat under root.  `path` may be absolute or relative (both mean "inside
 * root").  `flags` as for openat (O_CLOEXEC is always added); with O_CREAT the
 * parent must exist.  Returns an fd or -1. */
int sr_open_in_root (int rootfd, const char *path, int flags, mode_t mode,
                     sr_error **err);

/* mkdir -p under root; returns an O_PATH|O_DIRECTORY fd of the last
 * directory.  A component that exists and is not a directory is ENOTDIR. */
int sr_mkdir_in_root (int rootfd, const char *path, mode_t mode,
                      sr_error **err);

/* Ensure a mount target exists under root: a directory when `dir` is true,
 * else an empty regular file (parents created as directories).  An existing
 * target of the other kind is an error (ENOTDIR / EISDIR).  A target that is
 * a symlink is resolved in root, never followed out.  Returns an O_PATH fd of
 * the target. */
int sr_ensure_target_in_root (int rootfd, const char *path, bool dir,
                              mode_t mode, sr_error **err);

/* Re-open an O_PATH fd with real access flags (through the verified procfs
 * handle, never a path lookup).  O_CREAT, O_EXCL and O_NOFOLLOW are ignored;
 * the result is checked to be the same inode.  (Implemented in procfs.c: the
 * one place a magic link is followed.) */
int sr_reopen_fd (int opath_fd, int flags, sr_error **err);

/* The kernel's idea of where an fd points ("/proc/self/fd/N" readlink);
 * malloc'd, NULL on failure. */
char *sr_fd_path (int fd);

/* True when the path of `fd` is `rootpath` or below it. */
bool sr_fd_is_beneath (int fd, const char *rootpath);

/* True when both fds are the same inode (st_dev and st_ino): for checking
 * that what was opened, mounted or created is still what is there. */
bool sr_fd_same_inode (int a, int b);

/* Testing hook: pretend openat2 does not exist (exercise the fallback).  It
 * affects sr_openat2 and so procfs.h too. */
void sr_safepath_force_fallback (bool on);

/* openat2(2) as a raw syscall (`resolve`: RESOLVE_* flags), retrying the
 * transient EAGAIN of a concurrent rename.  Returns an fd or -1 with errno;
 * ENOSYS when the kernel (or a seccomp filter) does not offer openat2 or the
 * fallback is forced.  O_CLOEXEC is always added. */
int sr_openat2 (int dirfd, const char *path, int flags, mode_t mode,
                unsigned long long resolve);

#endif
