/* A verified handle on procfs: every write under /proc (uid_map, oom_score_adj,
 * attr/exec, sysctl, ...) goes through it, so a container cannot redirect the
 * write by mounting over or symlinking parts of /proc (CVE-2019-19921,
 * CVE-2025-52881 class).  The handle is a private procfs instance (fsopen +
 * fsmount where available), checked with fstatfs(PROC_SUPER_MAGIC); the paths
 * below it are resolved with RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV... no
 * symlink may lead out of it. */
#ifndef SANDRUN_PROCFS_H
#define SANDRUN_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sandrun/error.h"

/* The cached fd of the procfs root (for the pid namespace this process sees
 * at the time of the first call).  Borrowed: do not close it.  In order of
 * preference: a new procfs instance of our own (fsopen + fsmount, detached,
 * so nobody can mount over its files), a detached clone of /proc without its
 * submounts (open_tree), /proc itself.  Each is checked to be a procfs root;
 * the cached fd is re-checked on every call (an fd-closing loop may have
 * recycled its number). */
int sr_procfs_root (sr_error **err);

/* Open "PATH" relative to /proc ("self/fd", "1234/ns/pid", "sys/kernel/..").
 * "self" and "thread-self" are resolved first, from the handle's own "self"
 * link: that gives this process's pid as the handle's pid namespace numbers
 * it, which getpid() does not once we are in a child pid namespace.  No magic
 * link is followed, no mount crossed, no ".." above the root (openat2
 * RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV); O_PATH|O_NOFOLLOW
 * opens a trailing (magic) link itself.  The result is checked to be on the
 * handle's mount.  Returns an fd or -1. */
int sr_procfs_open (const char *path, int flags, sr_error **err);

/* Read the symlink PATH ("self/fd/3", "self/ns/pid", ...) without following
 * it; "self" and "thread-self" alone are those links themselves (this
 * process's pid as the handle numbers it).  Returns a malloc'd string or
 * NULL. */
char *sr_procfs_readlink (const char *path, sr_error **err);

/* Write a whole string to a file under /proc (O_WRONLY, one write call, as
 * procfs files expect). */
int sr_procfs_write (const char *path, const char *data, sr_error **err);

/* Read a file under /proc into a malloc'd NUL-terminated buffer. */
int sr_procfs_read (const char *path, char **out, size_t *len, sr_error **err);

/* Whether `fd` (any kind, O_PATH too) is on a procfs filesystem. */
bool sr_fd_on_procfs (int fd);

/* Forget the cached handle: call after entering a new pid or mount
 * namespace whose procfs the next calls must see. */
void sr_procfs_reset (void);

#endif
