/* A verified handle on procfs (see procfs.h).
 *
 * The handle is a procfs root fd that no one else can have mounted things
 * over: a private instance when fsopen works, a detached clone of /proc (no
 * submounts) when open_tree does, /proc itself at worst.  Paths beneath it are
 * resolved by the kernel with RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS|
 * RESOLVE_NO_XDEV, and the result must sit on the handle's own mount.  The one
 * magic link ever followed is "self/fd/N" in sr_reopen_fd. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "util/procfs.h"
#include "util/safepath.h"
#include "sandrun/util.h"

#define PROC_ROOT_INO 1
/* procfs files are small; this bounds what a hostile one can make us hold. */
#define PROCFS_READ_MAX (16 * 1024 * 1024)
#define PROCFS_RESOLVE                                                        \
  (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)

static int cached_root = -1;
static uint64_t cached_mnt_id; /* 0 when statx cannot tell */
/* Set in a child of fork(): the handle is checked again before its next
 * use (see sr_procfs_root). */
static bool verify_root;
/* "self" and "thread-self" as the handle numbers them, for the process and
 * thread that asked last (a forked child asks again: its pid differs). */
static pid_t cached_self_pid, cached_self_tid;
static char *cached_self, *cached_thread_self;

bool
sr_fd_on_procfs (int fd)
{
  struct statfs sfs;
  return fstatfs (fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
}

static bool
fd_statx (int fd, struct statx *stx)
{
  return statx (fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
                STATX_TYPE | STATX_INO | STATX_MNT_ID, stx)
         == 0;
}

static uint64_t
statx_mnt_id (const struct statx *stx)
{
  return (stx->stx_mask & STATX_MNT_ID) ? stx->stx_mnt_id : 0;
}

/* The root directory of a procfs mount; its mount id into *mnt_id. */
static bool
is_procfs_root (int fd, uint64_t *mnt_id)
{
  struct statx stx;

  if (!sr_fd_on_procfs (fd) || !fd_statx (fd, &stx))
    return false;
  if (!S_ISDIR (stx.stx_mode) || stx.stx_ino != PROC_ROOT_INO)
    return false;
  *mnt_id = statx_mnt_id (&stx);
  return true;
}

/* Our own procfs instance, attached nowhere: nothing can be mounted over its
 * files.  The instance belongs to the pid namespace we are in now. */
static int
procfs_new_instance (void)
{
  _cleanup_close_ int ctx = fsopen ("proc", FSOPEN_CLOEXEC);
  if (ctx < 0)
    return -1;
  if (fsconfig (ctx, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return -1;
  return fsmount (ctx, FSMOUNT_CLOEXEC,
                  MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
}

/* Where a new instance is refused (a user namespace whose /proc is partly
 * masked): a copy of the /proc mount alone; its over-mounts are submounts,
 * which a non-recursive clone leaves out. */
static int
procfs_clone_tree (void)
{
  return open_tree (AT_FDCWD, "/proc",
                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
}

static int
procfs_plain (void)
{
  return open ("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static void
after_fork_in_child (void)
{
  verify_root = true;
}

/* A check per fork() rather than a getpid() per use: this is on every
 * path into /proc.  (The core's own clones keep the handle as it is: they
 * close nothing they do not own.) */
static void
watch_forks (void)
{
  static bool registered;
  if (!registered)
    registered = pthread_atfork (NULL, NULL, after_fork_in_child) == 0;
}

int
sr_procfs_root (sr_error **err)
{
  static int (*const sources[]) (void)
      = { procfs_new_instance, procfs_clone_tree, procfs_plain };
  uint64_t mnt_id;

  /* Verified when it was opened; nothing in sandrun closes fds it does not
   * own (the fd sweep before execve only marks them close-on-exec).  A
   * forked child checks again, once: a long-lived parent's child (a
   * session's worker) may have put its own fds at any number.  One that is
   * no longer the handle is forgotten, not closed: it is someone else's. */
  if (cached_root >= 0 && !verify_root)
    return cached_root;
  verify_root = false;
  if (cached_root >= 0 && is_procfs_root (cached_root, &mnt_id)
      && mnt_id == cached_mnt_id)
    return cached_root;
  cached_root = -1;

  for (size_t i = 0; i < ARRAY_SIZE (sources); i++)
    {
      int fd = sources[i]();
      if (fd >= 0 && is_procfs_root (fd, &mnt_id))
        {
          cached_root = fd;
          cached_mnt_id = mnt_id;
          watch_forks ();
          return fd;
        }
      sr_close (fd);
    }
  return sr_fail (err, ENOENT, "no usable procfs (is /proc mounted?)");
}

void
sr_procfs_reset (void)
{
  sr_close (cached_root);
  cached_root = -1;
  free (cached_self);
  free (cached_thread_self);
  cached_self = cached_thread_self = NULL;
  cached_self_pid = cached_self_tid = 0;
}

/* Without openat2: one component at a time, no symlink followed, no "..";
 * the mount check of the caller catches an over-mount on the way. */
static int
procfs_walk (int root, const char *rel, int flags)
{
  _cleanup_free_ char *copy = xstrdup (rel);
  _cleanup_close_ int cur = -1;
  char *save = NULL;

  for (char *c = strtok_r (copy, "/", &save); c != NULL;)
    {
      char *next = strtok_r (NULL, "/", &save);
      int dirfd = cur >= 0 ? cur : root;

      if (strcmp (c, "..") == 0)
        {
          errno = EXDEV;
          return -1;
        }
      if (next == NULL && strcmp (c, ".") != 0)
        return openat (dirfd, c, flags | O_NOFOLLOW | O_CLOEXEC);
      if (strcmp (c, ".") != 0)
        {
          int fd = openat (dirfd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (fd < 0)
            return -1;
          sr_close (cur);
          cur = fd;
        }
      c = next;
    }
  return openat (cur >= 0 ? cur : root, ".", flags | O_CLOEXEC);
}

/* Open `rel` (no "self" translation) beneath the handle. */
static int
procfs_open_raw (const char *rel, int flags, sr_error **err)
{
  int root = sr_procfs_root (err);
  if (root < 0)
    return -1;

  _cleanup_close_ int fd = sr_openat2 (root, rel, flags, 0, PROCFS_RESOLVE);
  if (fd >= 0)
    return steal_fd (&fd); /* RESOLVE_BENEATH|NO_XDEV: on the handle's mount */
  if (errno == ENOSYS)
    fd = procfs_walk (root, rel, flags);
  if (fd < 0)
    return sr_fail (err, errno, "open \"/proc/%s\"", rel);

  struct statx stx;
  if (!sr_fd_on_procfs (fd) || !fd_statx (fd, &stx)
      || statx_mnt_id (&stx) != cached_mnt_id)
    return sr_fail (err, EXDEV, "\"/proc/%s\" is not on the procfs handle",
                    rel);
  return steal_fd (&fd);
}

static char *
readlink_fd (int fd, const char *what, sr_error **err)
{
  for (size_t size = PATH_MAX;; size *= 2)
    {
      _cleanup_free_ char *buf = xmalloc (size);
      ssize_t n = readlinkat (fd, "", buf, size);
      if (n < 0)
        {
          sr_fail (err, errno, "readlink \"/proc/%s\"", what);
          return NULL;
        }
      if ((size_t) n < size)
        {
          buf[n] = '\0';
          return steal_pointer (&buf);
        }
      if (size >= 16 * PATH_MAX)
        {
          sr_fail (err, ENAMETOOLONG, "readlink \"/proc/%s\"", what);
          return NULL;
        }
    }
}

static char *
procfs_readlink_raw (const char *rel, sr_error **err)
{
  _cleanup_close_ int fd = procfs_open_raw (rel, O_PATH | O_NOFOLLOW, err);
  if (fd < 0)
    return NULL;
  return readlink_fd (fd, rel, err);
}

static bool
is_number (const char *s, size_t len)
{
  return len > 0 && strspn (s, "0123456789") == len;
}

/* "1234" for self, "1234/task/1235" for thread-self. */
static bool
is_pid_link (const char *t, bool thread)
{
  size_t n = strspn (t, "0123456789");
  if (!thread)
    return is_number (t, strlen (t));
  return n > 0 && strncmp (t + n, "/task/", 6) == 0
         && is_number (t + n + 6, strlen (t + n + 6));
}

/* `path` relative to the procfs root, "self" and "thread-self" replaced by
 * what the handle's own links say. */
static char *
procfs_translate (const char *path, sr_error **err)
{
  path += strspn (path, "/");
  if (*path == '\0')
    return xstrdup (".");

  size_t len = strcspn (path, "/");
  bool self = len == 4 && strncmp (path, "self", len) == 0;
  bool thread = len == 11 && strncmp (path, "thread-self", len) == 0;
  if (!self && !thread)
    return xstrdup (path);

  pid_t id = self ? getpid () : gettid ();
  pid_t *cached_id = self ? &cached_self_pid : &cached_self_tid;
  char **cached = self ? &cached_self : &cached_thread_self;
  if (*cached == NULL || *cached_id != id)
    {
      char *target = procfs_readlink_raw (self ? "self" : "thread-self", err);
      if (target == NULL)
        return NULL;
      if (!is_pid_link (target, thread))
        {
          sr_fail (err, EINVAL, "unexpected \"/proc/%.*s\" target \"%s\"",
                   (int) len, path, target);
          free (target);
          return NULL;
        }
      free (*cached);
      *cached = target;
      *cached_id = id;
    }
  return xasprintf ("%s%s", *cached, path + len);
}

int
sr_procfs_open (const char *path, int flags, sr_error **err)
{
  _cleanup_free_ char *rel = procfs_translate (path, err);
  if (rel == NULL)
    return -1;
  return procfs_open_raw (rel, flags, err);
}

char *
sr_procfs_readlink (const char *path, sr_error **err)
{
  /* "self" alone: the link itself, not the directory it names. */
  path += strspn (path, "/");
  if (strcmp (path, "self") == 0 || strcmp (path, "thread-self") == 0)
    return procfs_readlink_raw (path, err);

  _cleanup_free_ char *rel = procfs_translate (path, err);
  if (rel == NULL)
    return NULL;
  return procfs_readlink_raw (rel, err);
}

int
sr_reopen_fd (int opath_fd, int flags, sr_error **err)
{
  _cleanup_close_ int fddir = sr_procfs_open ("self/fd", O_PATH | O_DIRECTORY, err);
  if (fddir < 0)
    return sr_wrap (err, "reopen fd %d", opath_fd);

  /* The one lookup that follows a magic link, on purpose: one component, in
     a directory resolved and checked above. */
  char name[16];
  snprintf (name, sizeof name, "%d", opath_fd);
  _cleanup_close_ int fd
      = openat (fddir, name, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_CLOEXEC);
  if (fd < 0)
    return sr_fail (err, errno, "reopen fd %d", opath_fd);

  if (!sr_fd_same_inode (opath_fd, fd))
    return sr_fail (err, EXDEV, "reopen fd %d: got another file", opath_fd);
  return steal_fd (&fd);
}

int
sr_procfs_write (const char *path, const char *data, sr_error **err)
{
  _cleanup_close_ int fd = sr_procfs_open (path, O_WRONLY, err);
  if (fd < 0)
    return -1;

  /* One write: procfs files take a whole value per write call. */
  size_t len = strlen (data);
  ssize_t n;
  do
    n = write (fd, data, len);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return sr_fail (err, errno, "write \"/proc/%s\"", path);
  if ((size_t) n != len)
    return sr_fail (err, EIO, "write \"/proc/%s\": short write (%zd of %zu)",
                    path, n, len);
  return 0;
}

int
sr_procfs_read (const char *path, char **out, size_t *len, sr_error **err)
{
  _cleanup_close_ int fd = sr_procfs_open (path, O_RDONLY, err);
  if (fd < 0)
    return -1;

  /* st_size is 0 for most procfs files: read until EOF. */
  size_t size = 4096, used = 0;
  _cleanup_free_ char *buf = xmalloc (size);
  for (;;)
    {
      if (size - used < 2)
        {
          if (size >= PROCFS_READ_MAX)
            return sr_fail (err, EFBIG, "read \"/proc/%s\"", path);
          size *= 2;
          buf = xrealloc (buf, size);
        }
      ssize_t n = read (fd, buf + used, size - used - 1);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return sr_fail (err, errno, "read \"/proc/%s\"", path);
      if (n == 0)
        break;
      used += (size_t) n;
    }
  buf[used] = '\0';
  if (len != NULL)
    *len = used;
  *out = steal_pointer (&buf);
  return 0;
}
