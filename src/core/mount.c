/* Mount primitives: a filesystem or a bind made detached, configured, then
 * attached on a target fd (new mount API), or mount(2) on the target's magic
 * link where the kernel lacks mount_setattr (see mountopt.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandrun/log.h"
#include "core/mountopt.h"
#include "util/procfs.h"
#include "util/safepath.h"
#include "sandrun/util.h"

/* ---- the primitives ------------------------------------------------------ */

static bool force_legacy;
static int api_state = -1;

void
sr_mount_force_legacy (bool on)
{
  force_legacy = on;
}

bool
sr_mount_api_available (void)
{
  if (force_legacy)
    return false;
  if (api_state < 0)
    {
      struct mount_attr a = { 0 };
      long r = syscall (SYS_mount_setattr, -1, "", AT_EMPTY_PATH, &a,
                        sizeof a);
      /* The kernel answers EBADF; EPERM is the seccomp profile of an older
         container engine that does not know the syscall. */
      api_state = !(r < 0 && (errno == ENOSYS || errno == EPERM));
    }
  return api_state;
}

/* The path that reaches an fd through the verified procfs handle, for the
 * mount(2) fallback, which only takes paths. */
static char *
fd_magic_path (int fd, sr_error **err)
{
  int proc = sr_procfs_root (err);
  if (proc < 0)
    return NULL;
  return xasprintf ("/proc/self/fd/%d/self/fd/%d", proc, fd);
}

/* The kernel's message about a failed fsconfig, "(tmpfs: Bad value for
 * 'size')", or "". */
static char *
fs_log (int fsfd)
{
  char buf[512];
  ssize_t n = read (fsfd, buf, sizeof buf - 1);
  if (n <= 2)
    return xstrdup ("");
  buf[n] = '\0';
  buf[strcspn (buf, "\n")] = '\0';
  return xasprintf (" (%s)", buf + 2); /* skip the "e " severity prefix */
}

static int
fs_config (int fsfd, const char *key, const char *value, sr_error **err)
{
  unsigned cmd = value ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG;
  if (syscall (SYS_fsconfig, fsfd, cmd, key, value, 0) == 0)
    return 0;
  int saved = errno;
  _cleanup_free_ char *log = fs_log (fsfd);
  return sr_fail (err, saved, "option \"%s%s%s\"%s", key, value ? "=" : "",
                  value ? value : "", log);
}

/* Superblock flags, by the names fsconfig knows.  "silent" (quieter kernel
 * messages) and "iversion" are only passed on to the filesystems that take
 * them: mount(2) ignores both elsewhere too. */
static const struct
{
  unsigned long ms;
  const char *name;
  bool optional;
} sb_flags[] = {
  { MS_RDONLY, "ro", false },         { MS_SYNCHRONOUS, "sync", false },
  { MS_DIRSYNC, "dirsync", false },   { MS_MANDLOCK, "mand", false },
  { MS_LAZYTIME, "lazytime", false }, { MS_SILENT, "silent", true },
  { MS_I_VERSION, "iversion", true },
};

static int
fs_config_sb_flags (int fsfd, unsigned long flags, sr_error **err)
{
  for (size_t i = 0; i < ARRAY_SIZE (sb_flags); i++)
    {
      _cleanup_error_ sr_error *e = NULL;
      if (!(flags & sb_flags[i].ms)
          || fs_config (fsfd, sb_flags[i].name, NULL, &e) == 0)
        continue;
      if (!sb_flags[i].optional || e->errnum != EINVAL)
        {
          *err = steal_pointer (&e);
          return -1;
        }
      sr_debug ("ignored: %s", e->msg);
    }
  return 0;
}

/* mount(2) takes the SELinux contexts (context=, fscontext=, defcontext=,
 * rootcontext=) in double quotes, as labels hold commas, and strips them;
 * fsconfig takes the bare value. */
static const char *
fs_config_value (const char *key, char *value)
{
  size_t k = strlen (key), n = value ? strlen (value) : 0;

  if (k < 7 || strcmp (key + k - 7, "context") != 0 || n < 2
      || value[0] != '"' || value[n - 1] != '"')
    return value;
  value[n - 1] = '\0';
  return value + 1;
}

static int
fs_config_all (int fsfd, const char *source, const struct sr_mount_opts *o,
               sr_error **err)
{
  if (source && fs_config (fsfd, "source", source, err) < 0)
    return -1;
  if (fs_config_sb_flags (fsfd, o->flags, err) < 0)
    return -1;
  for (size_t i = 0; o->data && o->data[i]; i++)
    {
      _cleanup_free_ char *key = xstrdup (o->data[i]);
      char *eq = strchr (key, '=');
      if (eq)
        *eq++ = '\0';
      if (fs_config (fsfd, key, fs_config_value (key, eq), err) < 0)
        return -1;
    }
  return 0;
}

/* A detached mount of a new filesystem, configured, flags applied. */
static int
new_fs_detached (const char *type, const char *source,
                 const struct sr_mount_opts *o, sr_error **err)
{
  _cleanup_close_ int fsfd = (int) syscall (SYS_fsopen, type, FSOPEN_CLOEXEC);
  uint64_t set, clr;
  int mfd;

  if (fsfd < 0)
    return sr_fail (err, errno, "fsopen");
  if (fs_config_all (fsfd, source, o, err) < 0)
    return -1;
  if (syscall (SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    {
      int saved = errno;
      _cleanup_free_ char *log = fs_log (fsfd);
      return sr_fail (err, saved, "create superblock%s", log);
    }
  sr_mount_opts_attr (o, &set, &clr);
  mfd = (int) syscall (SYS_fsmount, fsfd, FSMOUNT_CLOEXEC, (unsigned) set);
  if (mfd < 0)
    return sr_fail (err, errno, "fsmount");
  return mfd;
}

static int
setattr_raw (int mntfd, uint64_t set, uint64_t clr, bool recursive,
             unsigned long propagation)
{
  struct mount_attr a = { .attr_set = set, .attr_clr = clr,
                          .propagation = propagation & ~MS_REC };
  unsigned flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
  return (int) syscall (SYS_mount_setattr, mntfd, "", flags, &a, sizeof a);
}

/* mount(2) fallback of mount_setattr for one mount: a bind remount keeps
 * the flags it is not asked to change (some are locked in a user ns). */
static int
setattr_legacy (int mntfd, uint64_t set, uint64_t clr, sr_error **err)
{
  _cleanup_free_ char *path = fd_magic_path (mntfd, err);
  struct statvfs sv;
  unsigned long flags;

  if (path == NULL)
    return -1;
  if (fstatvfs (mntfd, &sv) < 0)
    return sr_fail (err, errno, "statvfs");
  /* ST_* and MS_* share their values for the per-mount flags. */
  flags = sr_mount_attr_to_ms (sv.f_flag, set, clr);
  if (mount (NULL, path, NULL, MS_BIND | MS_REMOUNT | flags, NULL) < 0)
    return sr_fail (err, errno, "remount");
  return 0;
}

int
sr_mount_setattr_fd (int mntfd, uint64_t set, uint64_t clr, bool recursive,
                     unsigned long propagation, sr_error **err)
{
  bool api = sr_mount_api_available ();

  if (set != 0 || clr != 0)
    {
      if (!api && recursive)
        return sr_fail (err, ENOSYS, "recursive mount attributes need "
                        "mount_setattr (Linux 5.12)");
      if (!api && setattr_legacy (mntfd, set, clr, err) < 0)
        return -1;
      if (api && setattr_raw (mntfd, set, clr, recursive, 0) < 0)
        return sr_fail (err, errno, "mount_setattr");
    }
  if (propagation == 0)
    return 0;
  if (api)
    {
      if (setattr_raw (mntfd, 0, 0, propagation & MS_REC, propagation) < 0)
        return sr_fail (err, errno, "set propagation");
      return 0;
    }
  _cleanup_free_ char *path = fd_magic_path (mntfd, err);
  if (path == NULL)
    return -1;
  if (mount (NULL, path, NULL, propagation, NULL) < 0)
    return sr_fail (err, errno, "set propagation");
  return 0;
}

/* The flags of `o` on a new bind mount.  A flag the mount cannot lose (the
 * source's nosuid, nodev, ... locked by a user namespace) makes clearing it
 * EPERM: mount(8) semantics would fail too, runc keeps the locked flag;
 * so do we, with a warning. */
static int
bind_apply_flags (int mntfd, const struct sr_mount_opts *o, sr_error **err)
{
  uint64_t set, clr;

  sr_mount_opts_attr (o, &set, &clr);
  if (set == 0 && clr == 0)
    return 0;
  if (!sr_mount_api_available ())
    return setattr_legacy (mntfd, set, clr, err);
  if (setattr_raw (mntfd, set, clr, false, 0) == 0)
    return 0;
  if (errno == EPERM && (clr & ~(uint64_t) MOUNT_ATTR__ATIME))
    {
      sr_warn ("cannot clear locked mount flags, keeping them");
      clr &= MOUNT_ATTR__ATIME;
      if (setattr_raw (mntfd, set, clr, false, 0) == 0)
        return 0;
    }
  return sr_fail (err, errno, "mount_setattr");
}

/* After a mount landed on t->fd: check where it is, then the propagation
 * and the recursive attributes.  Takes ownership of mntfd. */
static int
finish_mount (const struct sr_mount_at *t, int mntfd_owned,
              const struct sr_mount_opts *o, sr_error **err)
{
  _cleanup_close_ int mntfd = mntfd_owned;

  if (t->rootpath && !sr_fd_is_beneath (mntfd, t->rootpath))
    {
      _cleanup_free_ char *where = sr_fd_path (mntfd);
      return sr_fail (err, EXDEV, "mounted at \"%s\", outside the rootfs",
                      where ? where : "?");
    }
  if (o->propagation
      && sr_mount_setattr_fd (mntfd, 0, 0, false, o->propagation, err) < 0)
    return -1;
  if ((o->rec_set | o->rec_clr)
      && sr_mount_setattr_fd (mntfd, o->rec_set, o->rec_clr, true, 0, err) < 0)
    return -1;
  return steal_fd (&mntfd);
}

static int
attach (int mntfd, int targetfd, sr_error **err)
{
  if (syscall (SYS_move_mount, mntfd, "", targetfd, "",
               MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return sr_fail (err, errno, "move_mount");
  return 0;
}

/* The legacy way: mount(2) on the magic link of the target, then the new
 * mount's root is found again by resolving the path under the root. */
static int
legacy_mount (const struct sr_mount_at *t, const char *source,
              const char *type, unsigned long flags, const char *data,
              sr_error **err)
{
  _cleanup_free_ char *target = fd_magic_path (t->fd, err);
  int fd;

  if (target == NULL)
    return -1;
  if (mount (source, target, type, flags, data) < 0)
    return sr_fail (err, errno, "mount");
  fd = sr_open_in_root (t->rootfd, t->path, O_PATH, 0, err);
  if (fd < 0)
    return sr_wrap (err, "reopen after mount");
  return fd;
}

/* ---- tmpcopyup ----------------------------------------------------------- */

/* The image decides how deep its trees go; the stack does not. */
#define COPY_MAX_DEPTH 128

static int copy_dir (int src, int dst, unsigned depth, sr_error **err);

static int
copy_file (int src, int dst, const char *name, const struct stat *st,
           sr_error **err)
{
  _cleanup_close_ int in = openat (src, name, O_RDONLY | O_NOFOLLOW
                                   | O_NONBLOCK | O_CLOEXEC);
  _cleanup_close_ int out = -1;
  struct stat now;
  char buf[65536];
  ssize_t n;

  /* What was looked at must be what is read: a regular file still. */
  if (in < 0 || fstat (in, &now) < 0)
    return sr_fail (err, errno, "open \"%s\"", name);
  if (!S_ISREG (now.st_mode) || now.st_ino != st->st_ino)
    return sr_fail (err, EAGAIN, "\"%s\" changed while copied", name);
  out = openat (dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW
                | O_CLOEXEC, 0600);
  if (out < 0)
    return sr_fail (err, errno, "create \"%s\"", name);
  while ((n = sr_read_all (in, buf, sizeof buf)) > 0)
    if (sr_write_all (out, buf, (size_t) n) < 0)
      return sr_fail (err, errno, "write \"%s\"", name);
  if (n < 0)
    return sr_fail (err, errno, "read \"%s\"", name);
  return 0;
}

static int
copy_subdir (int src, int dst, const char *name, unsigned depth,
             sr_error **err)
{
  _cleanup_close_ int in = -1;
  _cleanup_close_ int out = -1;

  if (depth >= COPY_MAX_DEPTH)
    return sr_fail (err, ELOOP, "\"%s\": directories nested too deep", name);
  in = openat (src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0)
    return sr_fail (err, errno, "open \"%s\"", name);
  if (mkdirat (dst, name, 0700) < 0)
    return sr_fail (err, errno, "mkdir \"%s\"", name);
  out = openat (dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (out < 0)
    return sr_fail (err, errno, "open \"%s\"", name);
  if (copy_dir (in, out, depth + 1, err) < 0)
    return sr_wrap (err, "%s", name);
  return 0;
}

static int
copy_link (int src, int dst, const char *name, sr_error **err)
{
  char target[PATH_MAX];
  ssize_t n = readlinkat (src, name, target, sizeof target - 1);

  if (n < 0)
    return sr_fail (err, errno, "readlink \"%s\"", name);
  target[n] = '\0';
  if (symlinkat (target, dst, name) < 0)
    return sr_fail (err, errno, "symlink \"%s\"", name);
  return 0;
}

/* One entry, then its owner, mode and times (never through a link). */
static int
copy_entry (int src, int dst, const char *name, unsigned depth,
            sr_error **err)
{
  struct stat st;
  int r;

  if (fstatat (src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return sr_fail (err, errno, "stat \"%s\"", name);
  if (S_ISDIR (st.st_mode))
    r = copy_subdir (src, dst, name, depth, err);
  else if (S_ISREG (st.st_mode))
    r = copy_file (src, dst, name, &st, err);
  else if (S_ISLNK (st.st_mode))
    r = copy_link (src, dst, name, err);
  else if (mknodat (dst, name, st.st_mode, st.st_rdev) == 0)
    r = 0;
  else
    {
      /* A device node in a user namespace: nothing to copy it as. */
      sr_warn ("tmpcopyup: skipping \"%s\": %s", name, strerror (errno));
      return 0;
    }
  if (r < 0)
    return -1;
  struct timespec times[2] = { st.st_atim, st.st_mtim };
  if (fchownat (dst, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0
      || (!S_ISLNK (st.st_mode)
          && fchmodat (dst, name, st.st_mode & 07777, 0) < 0)
      || utimensat (dst, name, times, AT_SYMLINK_NOFOLLOW) < 0)
    return sr_fail (err, errno, "attributes of \"%s\"", name);
  return 0;
}

static int
copy_dir (int src, int dst, unsigned depth, sr_error **err)
{
  int fd = fcntl (src, F_DUPFD_CLOEXEC, 3);
  _cleanup_closedir_ DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *de;

  if (d == NULL)
    {
      sr_close (fd);
      return sr_fail (err, errno, "read directory");
    }
  while ((errno = 0, de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (copy_entry (src, dst, de->d_name, depth, err) < 0)
        return -1;
    }
  if (errno != 0)
    return sr_fail (err, errno, "read directory");
  return 0;
}

/* tmpcopyup: what the target directory holds, into the detached mount that
 * will cover it. */
static int
copy_up (int targetfd, int mntfd, sr_error **err)
{
  _cleanup_close_ int src = sr_reopen_fd (targetfd, O_RDONLY | O_DIRECTORY,
                                          err);
  _cleanup_close_ int dst = -1;

  if (src < 0)
    return -1;
  dst = openat (mntfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dst < 0)
    return sr_fail (err, errno, "open the new mount");
  if (copy_dir (src, dst, 0, err) < 0)
    return sr_wrap (err, "tmpcopyup");
  return 0;
}

int
sr_mount_fs_at (const struct sr_mount_at *t, const char *type,
                const char *source, const struct sr_mount_opts *o,
                sr_error **err)
{
  int mntfd;

  if (sr_mount_api_available ())
    {
      mntfd = new_fs_detached (type, source, o, err);
      if (mntfd < 0)
        return -1;
      if ((o->copyup && copy_up (t->fd, mntfd, err) < 0)
          || attach (mntfd, t->fd, err) < 0)
        {
          sr_close (mntfd);
          return -1;
        }
    }
  else if (o->copyup)
    return sr_fail (err, ENOSYS, "tmpcopyup needs the new mount API "
                    "(Linux 5.12)");
  else
    {
      _cleanup_free_ char *data = sr_mount_opts_data (o);
      unsigned long flags = o->flags & ~(MS_BIND | MS_REC | MS_REMOUNT);
      mntfd = legacy_mount (t, source ? source : type, type, flags, data, err);
      if (mntfd < 0)
        return -1;
    }
  return finish_mount (t, mntfd, o, err);
}

static int
bind_legacy (const struct sr_mount_at *t, int srcdirfd, const char *srcpath,
             unsigned long rec, sr_error **err)
{
  _cleanup_free_ char *src = NULL;

  if (srcdirfd == AT_FDCWD)
    src = xstrdup (srcpath);
  else
    {
      _cleanup_free_ char *fdp = fd_magic_path (srcdirfd, err);
      if (fdp == NULL)
        return -1;
      src = *srcpath ? xasprintf ("%s/%s", fdp, srcpath) : steal_pointer (&fdp);
    }
  return legacy_mount (t, src, NULL, MS_BIND | rec, NULL, err);
}

int
sr_mount_detached_at (const struct sr_mount_at *t, int mntfd_owned,
                      const struct sr_mount_opts *o, sr_error **err)
{
  _cleanup_close_ int mntfd = mntfd_owned;

  /* Flags first: the mount is never visible without them. */
  if (bind_apply_flags (mntfd, o, err) < 0 || attach (mntfd, t->fd, err) < 0)
    return -1;
  return finish_mount (t, steal_fd (&mntfd), o, err);
}

int
sr_mount_bind_at (const struct sr_mount_at *t, int srcdirfd,
                  const char *srcpath, const struct sr_mount_opts *o,
                  sr_error **err)
{
  _cleanup_close_ int mntfd = -1;

  if (sr_mount_api_available ())
    {
      unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC;
      if (o->flags & MS_REC)
        flags |= AT_RECURSIVE;
      if (*srcpath == '\0')
        flags |= AT_EMPTY_PATH;
      mntfd = (int) syscall (SYS_open_tree, srcdirfd, srcpath, flags);
      if (mntfd < 0)
        return sr_fail (err, errno, "open_tree");
      return sr_mount_detached_at (t, steal_fd (&mntfd), o, err);
    }
  mntfd = bind_legacy (t, srcdirfd, srcpath, o->flags & MS_REC, err);
  if (mntfd < 0 || bind_apply_flags (mntfd, o, err) < 0)
    return -1;
  return finish_mount (t, steal_fd (&mntfd), o, err);
}

int
sr_mount_remount_at (const struct sr_mount_at *t, const char *type,
                     const struct sr_mount_opts *o, sr_error **err)
{
  _cleanup_free_ char *data = sr_mount_opts_data (o);
  int fd;

  if (data != NULL && !(o->flags & MS_BIND))
    {
      _cleanup_free_ char *path = fd_magic_path (t->fd, err);
      unsigned long flags = o->flags & ~(MS_BIND | MS_REC);
      if (path == NULL)
        return -1;
      if (mount (NULL, path, type, flags, data) < 0)
        return sr_fail (err, errno, "remount");
    }
  else if (bind_apply_flags (t->fd, o, err) < 0)
    return -1;
  fd = fcntl (t->fd, F_DUPFD_CLOEXEC, 3);
  if (fd < 0)
    return sr_fail (err, errno, "dup");
  return finish_mount (t, fd, o, err);
}
