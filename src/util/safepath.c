/* Race-free path resolution under an untrusted root (see safepath.h).
 *
 * Two resolvers.  The kernel's openat2(RESOLVE_IN_ROOT) when it exists, and a
 * user-space walk that holds an fd for every directory it went through, so
 * that nothing is ever looked up again by name: ".." pops that stack (and
 * stays put at the root), a symlink's target is spliced into what is left of
 * the path (restarting at the root when absolute).  The walk also creates what
 * is missing (mkdir -p, mount target files), which openat2 cannot do for a
 * whole path.  A directory the walk holds may be renamed out of the root while
 * it walks, so its result is checked against the root's path (procfs). */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/procfs.h"
#include "util/safepath.h"
#include "sandrun/util.h"

/* The kernel's limit on symlinks followed in one lookup. */
#define SR_MAXSYMLINKS 40
/* A walk step that followed a symlink: go on with the spliced path. */
#define WALK_AGAIN (-2)

static bool force_fallback;
static int openat2_state; /* 0: not probed, 1: works, -1: unavailable */

void
sr_safepath_force_fallback (bool on)
{
  force_fallback = on;
  openat2_state = 0; /* probe again: a test may have changed the rules */
}

static bool
openat2_available (void)
{
  if (force_fallback)
    return false;
  if (openat2_state == 0)
    {
      struct open_how how = { .flags = O_PATH | O_CLOEXEC };
      long fd = syscall (SYS_openat2, AT_FDCWD, "/", &how, sizeof how);
      if (fd >= 0)
        close ((int) fd);
      /* EPERM: the seccomp profiles of older container engines refuse the
         syscall they do not know. */
      openat2_state = (fd < 0 && (errno == ENOSYS || errno == EPERM)) ? -1 : 1;
    }
  return openat2_state > 0;
}

int
sr_openat2 (int dirfd, const char *path, int flags, mode_t mode,
            unsigned long long resolve)
{
  struct open_how how = {
    .flags = (unsigned int) (flags | O_CLOEXEC),
    .resolve = resolve,
  };
  /* openat2 rejects a mode that would not be used. */
  if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
    how.mode = mode;

  if (!openat2_available ())
    {
      errno = ENOSYS;
      return -1;
    }
  /* EAGAIN: a rename raced with a ".." in the lookup; the kernel asks for a
     retry rather than risk an escape. */
  for (int i = 0; i < 64; i++)
    {
      long fd = syscall (SYS_openat2, dirfd, path, &how, sizeof how);
      if (fd >= 0 || errno != EAGAIN)
        return (int) fd;
    }
  return -1;
}

char *
sr_fd_path (int fd)
{
  char name[32];
  snprintf (name, sizeof name, "self/fd/%d", fd);

  _cleanup_error_ sr_error *err = NULL;
  char *path = sr_procfs_readlink (name, &err);
  if (path == NULL)
    errno = sr_error_errno (err);
  return path;
}

static bool
path_is_beneath (const char *path, const char *rootpath)
{
  if (path[0] != '/')
    return false; /* "anon_inode:[...]", "pipe:[...]": not a file at all */
  if (strcmp (rootpath, "/") == 0)
    return true;
  size_t n = strlen (rootpath);
  return strncmp (path, rootpath, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

bool
sr_fd_is_beneath (int fd, const char *rootpath)
{
  _cleanup_free_ char *path = sr_fd_path (fd);
  return path != NULL && path_is_beneath (path, rootpath);
}

/* ---- the user-space walk ---- */

enum walk_goal
{
  WALK_OPEN,  /* open the last component with `flags` */
  WALK_MKDIR, /* every component is a directory, created when missing */
  WALK_FILE,  /* parents created; the last one an existing non-directory or
                 a new empty file */
};

struct walk
{
  int rootfd;   /* borrowed */
  int *dirs;    /* owned fds of the directories below the root walked into */
  size_t depth, cap;
  char *path;   /* what is left to resolve starts at path + pos */
  size_t pos;
  unsigned links;
  enum walk_goal goal;
  int flags;
  mode_t mode;    /* of the opened or created last component */
  mode_t dirmode; /* of created directories */
};

static int
walk_cur (const struct walk *w)
{
  return w->depth > 0 ? w->dirs[w->depth - 1] : w->rootfd;
}

static void
walk_push (struct walk *w, int fd)
{
  if (w->depth == w->cap)
    {
      w->cap = w->cap ? 2 * w->cap : 16;
      w->dirs = xrealloc (w->dirs, w->cap * sizeof *w->dirs);
    }
  w->dirs[w->depth++] = fd;
}

/* ".." at the root is the root, as in the kernel. */
static void
walk_pop (struct walk *w)
{
  if (w->depth > 0)
    sr_close (w->dirs[--w->depth]);
}

static void
walk_free (struct walk *w)
{
  while (w->depth > 0)
    walk_pop (w);
  free (w->dirs);
  free (w->path);
}

/* The next component into `name`.  Returns 1 when the path is used up, 0 with
 * *last set when only slashes (*trailing_slash) or nothing follow. */
static int
walk_next (struct walk *w, char name[NAME_MAX + 1], bool *last,
           bool *trailing_slash)
{
  const char *p = w->path + w->pos;
  p += strspn (p, "/");
  if (*p == '\0')
    return 1;

  size_t len = strcspn (p, "/");
  if (len > NAME_MAX)
    {
      errno = ENAMETOOLONG;
      return -1;
    }
  memcpy (name, p, len);
  name[len] = '\0';
  w->pos = (size_t) (p + len - w->path);

  size_t slashes = strspn (p + len, "/");
  *last = p[len + slashes] == '\0';
  *trailing_slash = slashes > 0;
  return 0;
}

/* `linkfd` (O_PATH) is the symlink just met: what is left of the path becomes
 * its target followed by the rest, from the root when the target is
 * absolute. */
static int
walk_follow (struct walk *w, int linkfd)
{
  char target[PATH_MAX];

  if (++w->links > SR_MAXSYMLINKS)
    {
      errno = ELOOP;
      return -1;
    }
  /* A procfs link may be a magic link, which openat2 refuses too
     (RESOLVE_NO_MAGICLINKS); its text is no path to resolve in the root. */
  if (sr_fd_on_procfs (linkfd))
    {
      errno = ELOOP;
      return -1;
    }
  ssize_t n = readlinkat (linkfd, "", target, sizeof target);
  if (n < 0)
    return -1;
  if ((size_t) n >= sizeof target)
    {
      errno = ENAMETOOLONG;
      return -1;
    }
  if (n == 0)
    {
      errno = ENOENT;
      return -1;
    }
  target[n] = '\0';

  char *rest = xasprintf ("%s%s", target, w->path + w->pos);
  free (w->path);
  w->path = rest;
  w->pos = 0;
  if (target[0] == '/')
    while (w->depth > 0)
      walk_pop (w);
  return 0;
}

/* Follow `fd` when it is a symlink (WALK_AGAIN); else hand it back. */
static int
walk_follow_if_link (struct walk *w, int fd)
{
  struct stat st;

  if (fstat (fd, &st) < 0)
    {
      sr_close (fd);
      return -1;
    }
  if (!S_ISLNK (st.st_mode))
    return fd;
  int r = walk_follow (w, fd);
  sr_close (fd);
  return r < 0 ? -1 : WALK_AGAIN;
}

/* An intermediate component (or any, for WALK_MKDIR): a directory to enter,
 * created first when `create`. */
static int
walk_dir (struct walk *w, const char *name, bool create)
{
  if (strcmp (name, ".") == 0)
    return 0;
  if (strcmp (name, "..") == 0)
    {
      walk_pop (w);
      return 0;
    }

  int dirfd = walk_cur (w);
  int fd = openat (dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && create)
    {
      if (mkdirat (dirfd, name, w->dirmode) < 0 && errno != EEXIST)
        return -1;
      fd = openat (dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    }
  if (fd < 0)
    return -1;

  fd = walk_follow_if_link (w, fd);
  if (fd < 0)
    return fd == WALK_AGAIN ? 0 : -1;

  struct stat st;
  if (fstat (fd, &st) < 0)
    {
      sr_close (fd);
      return -1;
    }
  if (!S_ISDIR (st.st_mode))
    {
      sr_close (fd);
      errno = ENOTDIR;
      return -1;
    }
  walk_push (w, fd);
  return 0;
}

/* The last component, opened with the caller's flags.  The open itself never
 * follows a symlink: when one is there and the caller did not ask for
 * O_NOFOLLOW, it is followed by the walk. */
static int
walk_last_open (struct walk *w, const char *name)
{
  int dirfd = walk_cur (w);
  int fd = openat (dirfd, name, w->flags | O_NOFOLLOW | O_CLOEXEC, w->mode);

  if (w->flags & O_NOFOLLOW)
    return fd;
  if (fd >= 0)
    /* Only O_PATH|O_NOFOLLOW opens a symlink itself. */
    return (w->flags & O_PATH) ? walk_follow_if_link (w, fd) : fd;
  /* A symlink refused by O_NOFOLLOW: ELOOP, or ENOTDIR with O_DIRECTORY. */
  if (errno != ELOOP && errno != ENOTDIR)
    return -1;

  int saved = errno;
  fd = openat (dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      errno = saved;
      return -1;
    }
  fd = walk_follow_if_link (w, fd);
  if (fd >= 0)
    {
      /* Not a symlink after all: the first answer stands. */
      sr_close (fd);
      errno = saved;
      return -1;
    }
  return fd;
}

/* `fd` unless it is a directory (EISDIR); closed on failure. */
static int
fd_unless_dir (int fd)
{
  struct stat st;
  int r = fstat (fd, &st);

  if (r == 0 && !S_ISDIR (st.st_mode))
    return fd;
  if (r == 0)
    errno = EISDIR;
  sr_close (fd);
  return -1;
}

bool
sr_fd_same_inode (int a, int b)
{
  struct stat sa, sb;
  return fstat (a, &sa) == 0 && fstat (b, &sb) == 0 && sa.st_dev == sb.st_dev
         && sa.st_ino == sb.st_ino;
}

/* The last component of a file mount target: a new empty file, or whatever
 * non-directory is there already. */
static int
walk_last_file (struct walk *w, const char *name)
{
  int dirfd = walk_cur (w);
  _cleanup_close_ int created
      = openat (dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                w->mode);
  if (created < 0 && errno != EEXIST)
    return -1;

  int fd = openat (dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  if (created < 0)
    {
      fd = walk_follow_if_link (w, fd);
      if (fd < 0)
        return fd;
    }
  else if (!sr_fd_same_inode (created, fd))
    {
      /* What we created was swapped for something else before we opened
         it. */
      sr_close (fd);
      errno = EAGAIN;
      return -1;
    }
  return fd_unless_dir (fd);
}

/* The path ended on a directory (it was empty, "/", ended in ".." or "/"). */
static int
walk_end_dir (struct walk *w)
{
  switch (w->goal)
    {
    case WALK_OPEN:
      return openat (walk_cur (w), ".", (w->flags & ~O_NOFOLLOW) | O_CLOEXEC,
                     w->mode);
    case WALK_MKDIR:
      return openat (walk_cur (w), ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    case WALK_FILE:
    default:
      errno = EISDIR;
      return -1;
    }
}

static int
walk_run (struct walk *w)
{
  char name[NAME_MAX + 1];

  for (;;)
    {
      bool last = false, trailing_slash = false;
      int r = walk_next (w, name, &last, &trailing_slash);
      if (r < 0)
        return -1;
      if (r > 0)
        return walk_end_dir (w);

      bool dots = strcmp (name, ".") == 0 || strcmp (name, "..") == 0;
      if (last && !trailing_slash && !dots && w->goal != WALK_MKDIR)
        {
          int fd = w->goal == WALK_FILE ? walk_last_file (w, name)
                                        : walk_last_open (w, name);
          if (fd != WALK_AGAIN)
            return fd;
          continue;
        }
      if (walk_dir (w, name, w->goal != WALK_OPEN) < 0)
        return -1;
    }
}

/* Walk `path` under `rootfd`; -1 with errno on failure. */
static int
walk_in_root (int rootfd, const char *path, enum walk_goal goal, int flags,
              mode_t mode, mode_t dirmode)
{
  if (*path == '\0')
    {
      errno = ENOENT;
      return -1;
    }
  _cleanup_free_ char *rootpath = sr_fd_path (rootfd);
  if (rootpath == NULL)
    return -1;

  struct walk w = {
    .rootfd = rootfd,
    .path = xstrdup (path),
    .goal = goal,
    .flags = flags,
    .mode = mode,
    .dirmode = dirmode,
  };
  int fd = walk_run (&w);
  walk_free (&w);
  if (fd < 0)
    return -1;

  _cleanup_free_ char *fdpath = sr_fd_path (fd);
  if (fdpath == NULL || !path_is_beneath (fdpath, rootpath))
    {
      sr_close (fd);
      errno = EXDEV;
      return -1;
    }
  return fd;
}

/* ---- the API ---- */

#define IN_ROOT (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)

int
sr_open_in_root (int rootfd, const char *path, int flags, mode_t mode,
                 sr_error **err)
{
  int fd = sr_openat2 (rootfd, path, flags, mode, IN_ROOT);
  if (fd < 0 && errno == ENOSYS)
    fd = walk_in_root (rootfd, path, WALK_OPEN, flags, mode, 0);
  if (fd < 0)
    return sr_fail (err, errno, "open \"%s\" in the container root", path);
  return fd;
}

int
sr_mkdir_in_root (int rootfd, const char *path, mode_t mode, sr_error **err)
{
  /* Most of the time it exists already: one syscall. */
  int fd = sr_openat2 (rootfd, path, O_PATH | O_DIRECTORY, 0, IN_ROOT);
  if (fd < 0 && (errno == ENOSYS || errno == ENOENT))
    fd = walk_in_root (rootfd, path, WALK_MKDIR, 0, mode, mode);
  if (fd < 0)
    return sr_fail (err, errno, "mkdir \"%s\" in the container root", path);
  return fd;
}

static int
ensure_file_in_root (int rootfd, const char *path, mode_t mode)
{
  size_t len = strlen (path);
  if (len > 0 && path[len - 1] == '/')
    {
      errno = EISDIR;
      return -1;
    }

  int fd = sr_openat2 (rootfd, path, O_PATH, 0, IN_ROOT);
  if (fd < 0 && (errno == ENOSYS || errno == ENOENT))
    return walk_in_root (rootfd, path, WALK_FILE, 0, mode, 0755);
  if (fd < 0)
    return -1;
  return fd_unless_dir (fd);
}

int
sr_ensure_target_in_root (int rootfd, const char *path, bool dir, mode_t mode,
                          sr_error **err)
{
  if (dir)
    return sr_mkdir_in_root (rootfd, path, mode, err);

  int fd = ensure_file_in_root (rootfd, path, mode);
  if (fd < 0)
    return sr_fail (err, errno, "create file \"%s\" in the container root",
                    path);
  return fd;
}
