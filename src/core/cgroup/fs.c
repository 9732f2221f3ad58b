/* cgroupfs primitives: interface files, the directory walk that creates a
 * cgroup, its removal, and listing its processes.  Directories are opened
 * one component at a time with O_NOFOLLOW: a container that can write to
 * its own cgroup directory (cgroupns, rw cgroupfs) can name sub-cgroups as
 * it likes, so nothing below the mount is resolved as a path. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "internal.h"
#include "util/safepath.h"
#include "sandrun/util.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
/* Deeper nesting than this inside a container's cgroup is refused. */
#define MAX_DEPTH 64
/* How long removal waits for exiting processes to leave. */
#define REMOVE_WAIT_MS 2000

void
sr_cg_nap (unsigned ms)
{
  struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

int
sr_cg_write (int dirfd, const char *file, const char *value, sr_error **err)
{
  _cleanup_close_ int fd = openat (dirfd, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return sr_fail (err, errno, "cgroup \"%s\" = \"%s\"", file, value);
  /* One write: cgroupfs takes each write(2) as one value. */
  size_t len = strlen (value);
  ssize_t r;
  do
    r = write (fd, value, len);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return sr_fail (err, errno, "cgroup \"%s\" = \"%s\"", file, value);
  if ((size_t) r != len)
    return sr_fail (err, EIO, "cgroup \"%s\" = \"%s\": short write", file,
                    value);
  return 0;
}

int
sr_cg_writef (int dirfd, const char *file, sr_error **err, const char *fmt,
              ...)
{
  va_list ap;
  va_start (ap, fmt);
  _cleanup_free_ char *value = xvasprintf (fmt, ap);
  va_end (ap);
  return sr_cg_write (dirfd, file, value, err);
}

int
sr_cg_read (int dirfd, const char *file, char **out, sr_error **err)
{
  /* cgroupfs has no symlinks: openat below an opened cgroup is safe. */
  char *buf = NULL;
  size_t len = 0;
  if (sr_read_file_at (dirfd, file, 16 << 20, &buf, &len, err) < 0)
    return sr_wrap (err, "cgroup");
  while (len > 0 && buf[len - 1] == '\n')
    len--;
  buf[len] = '\0';
  *out = buf;
  return 0;
}

int
sr_cg_read_key (int dirfd, const char *file, const char *key,
                long long *value, sr_error **err)
{
  _cleanup_free_ char *text = NULL;
  if (sr_cg_read (dirfd, file, &text, err) < 0)
    return -1;
  size_t kl = strlen (key);
  for (char *line = text; line != NULL && *line;)
    {
      char *nl = strchr (line, '\n');
      if (nl)
        *nl = '\0';
      if (strncmp (line, key, kl) == 0 && line[kl] == ' ')
        {
          long v;
          if (sr_parse_long (line + kl + 1, &v) < 0)
            return sr_fail (err, EINVAL, "cgroup: \"%s\": bad value for %s",
                            file, key);
          *value = v;
          return 0;
        }
      line = nl ? nl + 1 : NULL;
    }
  return sr_fail (err, ENOENT, "cgroup: \"%s\" has no %s", file, key);
}

/* ---- creation ---------------------------------------------------------- */

int
sr_cg_mkdir_path (struct sr_cg_hier *h, sr_cg_prepare_fn prepare,
                  sr_error **err)
{
  _cleanup_close_ int fd = open (h->mnt, DIR_FLAGS);
  if (fd < 0)
    return sr_fail (err, errno, "cgroup: open \"%s\"", h->mnt);
  h->created = 0;
  _cleanup_free_ char *copy = xstrdup (h->path);
  char *save = NULL;
  for (char *c = strtok_r (copy, "/", &save); c != NULL;
       c = strtok_r (NULL, "/", &save))
    {
      bool created = mkdirat (fd, c, 0755) == 0;
      if (!created && errno != EEXIST)
        return sr_fail (err, errno, "cgroup: mkdir \"%s\" in \"%s%s\"", c,
                        h->mnt, h->path);
      if (created)
        h->created++;
      else
        h->created = 0; /* only a trailing run of new components is ours */
      _cleanup_close_ int child = openat (fd, c, DIR_FLAGS);
      if (child < 0)
        return sr_fail (err, errno, "cgroup: open \"%s\" in \"%s%s\"", c,
                        h->mnt, h->path);
      if (prepare != NULL && prepare (h->enable, fd, child, created, err) < 0)
        return sr_wrap (err, "cgroup \"%s%s\"", h->mnt, h->path);
      sr_close (fd);
      fd = steal_fd (&child);
    }
  sr_close (h->fd);
  h->fd = steal_fd (&fd);
  return 0;
}

/* One openat2 for the whole path below the mount, as strict as the walk
 * below (no symlink anywhere, not out of the mount): 1 syscall instead of
 * 2 per component.  1: opened, 0: not there, -1: walk instead (no openat2,
 * or an error the walk reports). */
static int
open_below (int mntfd, const char *path, int *out)
{
  while (*path == '/')
    path++;
  if (*path == '\0')
    return -1;
  int fd = sr_openat2 (mntfd, path, DIR_FLAGS, 0,
                       RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH
                           | RESOLVE_NO_XDEV);
  if (fd >= 0)
    {
      *out = fd;
      return 1;
    }
  return errno == ENOENT ? 0 : -1;
}

int
sr_cg_open_path (struct sr_cg_hier *h, sr_error **err)
{
  _cleanup_free_ char *full = xasprintf ("%s%s", h->mnt, h->path);
  _cleanup_close_ int fd = open (h->mnt, DIR_FLAGS);
  if (fd < 0)
    return sr_fail (err, errno, "cgroup: open \"%s\"", h->mnt);
  int below = -1;
  switch (open_below (fd, h->path, &below))
    {
    case 0:
      return 0;
    case 1:
      sr_close (h->fd);
      h->fd = below;
      return 0;
    }
  _cleanup_free_ char *copy = xstrdup (h->path);
  char *save = NULL;
  for (char *c = strtok_r (copy, "/", &save); c != NULL;
       c = strtok_r (NULL, "/", &save))
    {
      int child = openat (fd, c, DIR_FLAGS);
      if (child < 0 && errno == ENOENT)
        return 0;
      if (child < 0)
        return sr_fail (err, errno, "cgroup: open \"%s\"", full);
      sr_close (fd);
      fd = child;
    }
  sr_close (h->fd);
  h->fd = steal_fd (&fd);
  return 0;
}

/* ---- removal ----------------------------------------------------------- */

/* rmdir `name` below `parentfd` after its sub-cgroups, deepest first. */
static int
remove_tree (int parentfd, const char *name, int depth)
{
  if (depth > MAX_DEPTH)
    {
      errno = ELOOP;
      return -1;
    }
  if (unlinkat (parentfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
    return 0;
  if (errno != EBUSY && errno != ENOTEMPTY)
    return -1;

  int saved = errno;
  int fd = openat (parentfd, name, DIR_FLAGS);
  if (fd < 0)
    return errno == ENOENT ? 0 : -1;
  _cleanup_closedir_ DIR *dir = fdopendir (fd);
  if (dir == NULL)
    {
      sr_close (fd);
      return -1;
    }
  bool had_children = false;
  struct dirent *de;
  while ((de = readdir (dir)) != NULL)
    {
      if (de->d_type != DT_DIR || strcmp (de->d_name, ".") == 0
          || strcmp (de->d_name, "..") == 0)
        continue;
      had_children = true;
      if (remove_tree (dirfd (dir), de->d_name, depth + 1) < 0)
        return -1;
    }
  if (!had_children)
    {
      errno = saved;
      return -1;
    }
  if (unlinkat (parentfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
    return 0;
  return -1;
}

static int
remove_with_retry (int parentfd, const char *name, const char *what,
                   sr_error **err)
{
  for (unsigned waited = 0;; waited += 10)
    {
      if (remove_tree (parentfd, name, 0) == 0)
        return 0;
      if (errno != EBUSY || waited >= REMOVE_WAIT_MS)
        return sr_fail (err, errno, "cgroup: rmdir \"%s\"", what);
      sr_cg_nap (10);
    }
}

/* Open the parent directory of the component number `depth` of h->path
 * (0 = first component) and give the component's name. */
static int
open_parent_of (const struct sr_cg_hier *h, size_t depth, char **name)
{
  int fd = open (h->mnt, DIR_FLAGS);
  _cleanup_free_ char *copy = xstrdup (h->path);
  char *save = NULL;
  size_t i = 0;
  for (char *c = strtok_r (copy, "/", &save); c != NULL && fd >= 0;
       c = strtok_r (NULL, "/", &save), i++)
    {
      if (i == depth)
        {
          *name = xstrdup (c);
          return fd;
        }
      int child = openat (fd, c, DIR_FLAGS);
      sr_close (fd);
      fd = child;
    }
  sr_close (fd);
  return -1;
}

static size_t
count_components (const char *path)
{
  size_t n = 0;
  for (const char *p = path; *p; p++)
    n += p[0] != '/' && (p == path || p[-1] == '/');
  return n;
}

int
sr_cg_remove_path (struct sr_cg_hier *h, bool created_only, sr_error **err)
{
  size_t total = count_components (h->path);
  size_t to_remove = created_only ? h->created : 1;
  if (to_remove > total)
    to_remove = total;
  sr_close (h->fd);
  h->fd = -1;
  for (size_t k = 0; k < to_remove; k++)
    {
      size_t depth = total - 1 - k;
      _cleanup_free_ char *name = NULL;
      _cleanup_close_ int parent = open_parent_of (h, depth, &name);
      if (parent < 0)
        {
          if (errno == ENOENT)
            continue;
          return sr_fail (err, errno, "cgroup: open parent of \"%s%s\"",
                          h->mnt, h->path);
        }
      _cleanup_free_ char *what = xasprintf ("%s%s", h->mnt, h->path);
      if (k > 0)
        {
          /* A created parent that someone else now uses stays. */
          if (unlinkat (parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
            break;
          continue;
        }
      if (remove_with_retry (parent, name, what, err) < 0)
        return -1;
    }
  h->created = 0;
  return 0;
}

/* ---- processes --------------------------------------------------------- */

DIR *
sr_cg_opendir (int dirfd, sr_error **err)
{
  int fd = openat (dirfd, ".", DIR_FLAGS);
  if (fd < 0)
    return sr_fail (err, errno, "cgroup: open directory"), NULL;
  DIR *dir = fdopendir (fd);
  if (dir == NULL)
    {
      sr_fail (err, errno, "cgroup: open directory");
      sr_close (fd);
    }
  return dir;
}

static int
append_procs (int dirfd, pid_t **pids, size_t *n, sr_error **err)
{
  _cleanup_free_ char *text = NULL;
  if (sr_cg_read (dirfd, "cgroup.procs", &text, err) < 0)
    return -1;
  char *save = NULL;
  for (char *t = strtok_r (text, "\n", &save); t != NULL;
       t = strtok_r (NULL, "\n", &save))
    {
      long v;
      if (sr_parse_long (t, &v) < 0 || v <= 0)
        continue;
      *pids = xrealloc (*pids, (*n + 1) * sizeof **pids);
      (*pids)[(*n)++] = (pid_t) v;
    }
  return 0;
}

static int
collect (int dirfd, int depth, pid_t **pids, size_t *n, sr_error **err)
{
  if (depth > MAX_DEPTH)
    return sr_fail (err, ELOOP, "cgroup: sub-cgroups nested too deep");
  if (append_procs (dirfd, pids, n, err) < 0)
    return -1;
  _cleanup_closedir_ DIR *dir = sr_cg_opendir (dirfd, err);
  if (dir == NULL)
    return -1;
  struct dirent *de;
  while ((de = readdir (dir)) != NULL)
    {
      if (de->d_type != DT_DIR || strcmp (de->d_name, ".") == 0
          || strcmp (de->d_name, "..") == 0)
        continue;
      _cleanup_close_ int child = openat (dirfd, de->d_name, DIR_FLAGS);
      if (child < 0 && errno == ENOENT)
        continue; /* removed meanwhile */
      if (child < 0)
        return sr_fail (err, errno, "cgroup: open \"%s\"", de->d_name);
      if (collect (child, depth + 1, pids, n, err) < 0)
        return -1;
    }
  return 0;
}

int
sr_cg_collect_pids (int dirfd, pid_t **pids, size_t *n, sr_error **err)
{
  return collect (dirfd, 0, pids, n, err);
}
