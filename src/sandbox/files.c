/* Snapshots and differences of /work (see files.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "files.h"
#include "sandrun/sha256.h"
#include "sandrun/util.h"

/* `rel` under `root`, no component a symlink, never out of `root`: the
 * tree was the sandbox's to shape. */
static int
open_beneath (int root, const char *rel, int flags)
{
  struct open_how how
      = { .flags = (uint64_t) (flags | O_CLOEXEC),
          .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
                     | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
  return (int) syscall (SYS_openat2, root, rel, &how, sizeof how);
}

static void
add_entry (struct sb_files *f, const char *path, const struct stat *st)
{
  f->v = xrealloc (f->v, (f->n + 1) * sizeof *f->v);
  struct sb_file *e = &f->v[f->n++];
  memset (e, 0, sizeof *e);
  e->path = xstrdup (path);
  e->size = (uint64_t) st->st_size;
  e->disk_bytes = (uint64_t) st->st_blocks * 512;
  e->mtime_ns
      = (int64_t) st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
  e->ctime_ns
      = (int64_t) st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
  e->ino = st->st_ino;
  e->mode = st->st_mode;
}

/* Walk the directory `fd` (its path `rel` under the root), one file system
 * only, never following a symlink. */
static void
walk (int fd, const char *rel, dev_t dev, struct sb_files *f)
{
  DIR *d = fdopendir (fd);
  struct dirent *de;

  if (d == NULL)
    {
      close (fd);
      return;
    }
  while ((de = readdir (d)) != NULL)
    {
      struct stat st;
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (f->n >= SB_FILES_MAX)
        {
          f->incomplete = true;
          break;
        }
      if (fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      _cleanup_free_ char *path = rel[0] ? xasprintf ("%s/%s", rel, de->d_name)
                                         : xstrdup (de->d_name);
      if (!S_ISDIR (st.st_mode))
        {
          add_entry (f, path, &st);
          continue;
        }
      if (st.st_dev != dev)
        continue;
      int sub = openat (dirfd (d), de->d_name,
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0)
        walk (sub, path, dev, f);
    }
  closedir (d);
}

static int
by_path (const void *a, const void *b)
{
  return strcmp (((const struct sb_file *) a)->path,
                 ((const struct sb_file *) b)->path);
}

int
sb_files_snapshot (const char *dir, struct sb_files *out, sr_error **err)
{
  struct stat st;
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  memset (out, 0, sizeof *out);
  if (fd < 0 || fstat (fd, &st) < 0)
    {
      sr_close (fd);
      return sr_fail (err, errno, "read the files of \"%s\"", dir);
    }
  walk (fd, "", st.st_dev, out);
  if (out->n > 0)
    qsort (out->v, out->n, sizeof *out->v, by_path);
  return 0;
}

/* The SHA-256 of a regular file, read without following a symlink and
 * without blocking on anything that is not a regular file. */
static void
hash_file (int root, struct sb_file *e)
{
  char buf[65536];
  uint8_t md[32];
  sr_sha256_ctx c;
  ssize_t n;
  struct stat st;

  if (!S_ISREG (e->mode))
    return;
  _cleanup_close_ int fd
      = open_beneath (root, e->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    return;
  sr_sha256_init (&c);
  while ((n = read (fd, buf, sizeof buf)) > 0)
    sr_sha256_update (&c, buf, (size_t) n);
  if (n < 0)
    return;
  sr_sha256_final (&c, md);
  for (int i = 0; i < 32; i++)
    snprintf (e->sha256 + 2 * i, 3, "%02x", md[i]);
  e->has_sha256 = true;
}

static bool
same_file (const struct sb_file *a, const struct sb_file *b)
{
  return a->size == b->size && a->mtime_ns == b->mtime_ns
         && a->ctime_ns == b->ctime_ns && a->ino == b->ino
         && a->mode == b->mode;
}

static void
take (struct sb_files *changes, struct sb_file *e, const char *change)
{
  changes->v = xrealloc (changes->v, (changes->n + 1) * sizeof *changes->v);
  changes->v[changes->n] = *e;
  changes->v[changes->n].path = xstrdup (e->path);
  changes->v[changes->n].change = change;
  changes->n++;
}

int
sb_files_diff (const char *dir, const struct sb_files *before,
               struct sb_files *changes, sr_error **err)
{
  struct sb_files now;
  size_t i = 0, j = 0;

  memset (changes, 0, sizeof *changes);
  if (sb_files_snapshot (dir, &now, err) < 0)
    return -1;
  _cleanup_close_ int root = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  while (i < before->n || j < now.n)
    {
      int c = i >= before->n ? 1
              : j >= now.n   ? -1
                             : strcmp (before->v[i].path, now.v[j].path);
      if (c < 0)
        take (changes, &before->v[i++], "deleted");
      else if (c > 0)
        take (changes, &now.v[j++], "created");
      else
        {
          if (!same_file (&before->v[i], &now.v[j]))
            take (changes, &now.v[j], "changed");
          i++, j++;
        }
    }
  for (size_t k = 0; k < changes->n; k++)
    if (strcmp (changes->v[k].change, "deleted") != 0)
      hash_file (root, &changes->v[k]);
  changes->incomplete = before->incomplete || now.incomplete;
  sb_files_clear (&now);
  return 0;
}

uint64_t
sb_files_growth (const char *dir, const struct sb_files *before)
{
  struct sb_files now;
  uint64_t grown = 0;
  size_t i = 0;

  if (sb_files_snapshot (dir, &now, NULL) < 0)
    return 0;
  for (size_t j = 0; j < now.n; j++)
    {
      while (i < before->n && strcmp (before->v[i].path, now.v[j].path) < 0)
        i++;
      bool had
          = i < before->n && strcmp (before->v[i].path, now.v[j].path) == 0;
      if (!had)
        grown += now.v[j].disk_bytes;
      else if (!same_file (&before->v[i], &now.v[j])
               && now.v[j].disk_bytes > before->v[i].disk_bytes)
        grown += now.v[j].disk_bytes - before->v[i].disk_bytes;
    }
  sb_files_clear (&now);
  return grown;
}

static int
mkdirs_at (int dfd, const char *rel, sr_error **err)
{
  _cleanup_free_ char *p = xstrdup (rel);
  for (char *s = strchr (p, '/'); s != NULL; s = strchr (s + 1, '/'))
    {
      *s = '\0';
      if (mkdirat (dfd, p, 0755) < 0 && errno != EEXIST)
        return sr_fail (err, errno, "--collect: mkdir \"%s\"", p);
      *s = '/';
    }
  return 0;
}

static int
copy_one (int from_root, int to_root, const char *rel, sr_error **err)
{
  char buf[65536];
  ssize_t n;
  _cleanup_close_ int in
      = open_beneath (from_root, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  struct stat st;

  if (in < 0 || fstat (in, &st) < 0 || !S_ISREG (st.st_mode))
    return 0; /* gone or not a file any more */
  if (mkdirs_at (to_root, rel, err) < 0)
    return -1;
  _cleanup_close_ int out
      = openat (to_root, rel,
                O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (out < 0)
    return sr_fail (err, errno, "--collect: \"%s\"", rel);
  while ((n = read (in, buf, sizeof buf)) > 0)
    if (sr_write_all (out, buf, (size_t) n) < 0)
      return sr_fail (err, errno, "--collect: \"%s\"", rel);
  return 0;
}

int
sb_files_collect (const char *dir, const struct sb_files *changes,
                  const char *to, sr_error **err)
{
  if (mkdir (to, 0755) < 0 && errno != EEXIST)
    return sr_fail (err, errno, "--collect \"%s\"", to);
  _cleanup_close_ int from_root
      = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  _cleanup_close_ int to_root = open (to, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (from_root < 0 || to_root < 0)
    return sr_fail (err, errno, "--collect \"%s\"", to);
  for (size_t i = 0; i < changes->n; i++)
    if (strcmp (changes->v[i].change, "deleted") != 0
        && S_ISREG (changes->v[i].mode)
        && copy_one (from_root, to_root, changes->v[i].path, err) < 0)
      return -1;
  return 0;
}

void
sb_files_clear (struct sb_files *f)
{
  for (size_t i = 0; i < f->n; i++)
    free (f->v[i].path);
  free (f->v);
  memset (f, 0, sizeof *f);
}
