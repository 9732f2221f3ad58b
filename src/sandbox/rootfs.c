/* The sandbox's root (see rootfs.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rootfs.h"
#include "sandrun/util.h"

const char *const sb_host_dirs[]
    = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", NULL };

/* What programs need of /etc to run and to be correct (dynamic loader,
 * alternatives, certificates, time zone, name service, os-release);
 * nothing with secrets or host identity. */
const char *const sb_host_etc[] = {
  "/etc/ld.so.cache",  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d", "/etc/alternatives",
  "/etc/ssl",          "/etc/ca-certificates.conf",
  "/etc/localtime",    "/etc/timezone",
  "/etc/os-release",   "/etc/nsswitch.conf",
  "/etc/protocols",    "/etc/services",
  "/etc/mime.types",   "/etc/matplotlibrc",
  "/etc/python3",      NULL,
};

static const char passwd[]
    = "root:x:0:0:root:/root:/usr/sbin/nologin\n"
      "sandbox:x:1000:1000:sandbox:/work:/bin/sh\n"
      "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char group[] = "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n";
static const char hosts[] = "127.0.0.1\tlocalhost sandbox\n"
                            "::1\tlocalhost ip6-localhost ip6-loopback\n";

/* Make `path` (absolute, in the root `rootfd`) and its parents, as a file
 * when `file`; never through a symlink. */
static int
make_mount_point (int rootfd, const char *path, bool file, sr_error **err)
{
  _cleanup_free_ char *copy = xstrdup (path);
  _cleanup_close_ int dfd = dup (rootfd);
  char *save = NULL;

  for (char *c = strtok_r (copy, "/", &save); c != NULL;
       c = strtok_r (NULL, "/", &save))
    {
      bool last = save == NULL || *save == '\0';
      if (strcmp (c, "..") == 0)
        return sr_fail (err, EINVAL, "mount point \"%s\": \"..\"", path);
      if (last && file)
        {
          int fd = openat (dfd, c, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                           0644);
          if (fd < 0)
            return sr_fail (err, errno, "mount point \"%s\"", path);
          close (fd);
          return 0;
        }
      if (mkdirat (dfd, c, 0755) < 0 && errno != EEXIST)
        return sr_fail (err, errno, "mount point \"%s\"", path);
      int next
          = openat (dfd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0)
        return sr_fail (err, errno, "mount point \"%s\"", path);
      close (dfd);
      dfd = next;
    }
  return 0;
}

static int
write_file (int rootfd, const char *path, const char *text, sr_error **err)
{
  _cleanup_close_ int fd
      = openat (rootfd, path,
                O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 || sr_write_all (fd, text, strlen (text)) < 0)
    return sr_fail (err, errno, "write \"%s\" of the sandbox", path);
  return 0;
}

/* One host path in the skeleton: a symlink is copied, a directory or file
 * gets a mount point and goes to the read-only binds. */
static int
show_host_path (int rootfd, const char *path, struct sb_bundle *b,
                sr_error **err)
{
  struct stat st;
  char target[PATH_MAX];

  if (lstat (path, &st) < 0)
    return 0; /* not on this host */
  if (S_ISLNK (st.st_mode))
    {
      ssize_t n = readlink (path, target, sizeof target - 1);
      if (n < 0)
        return 0;
      target[n] = '\0';
      if (symlinkat (target, rootfd, path + 1) < 0 && errno != EEXIST)
        return sr_fail (err, errno, "symlink \"%s\" in the sandbox", path);
      return 0;
    }
  if (!S_ISDIR (st.st_mode) && !S_ISREG (st.st_mode))
    return 0;
  if (make_mount_point (rootfd, path, S_ISREG (st.st_mode), err) < 0)
    return -1;
  strv_append (&b->host_paths, path);
  return 0;
}

/* python3.11 and the like, beside the fixed names. */
static int
show_python_etc (int rootfd, struct sb_bundle *b, sr_error **err)
{
  _cleanup_closedir_ DIR *d = opendir ("/etc");
  struct dirent *de;

  while (d != NULL && (de = readdir (d)) != NULL)
    if (str_has_prefix (de->d_name, "python3."))
      {
        _cleanup_free_ char *p = xasprintf ("/etc/%s", de->d_name);
        if (show_host_path (rootfd, p, b, err) < 0)
          return -1;
      }
  return 0;
}

static int
default_skeleton (int rootfd, struct sb_bundle *b, sr_error **err)
{
  for (size_t i = 0; sb_host_dirs[i] != NULL; i++)
    if (show_host_path (rootfd, sb_host_dirs[i], b, err) < 0)
      return -1;
  if (mkdirat (rootfd, "etc", 0755) < 0)
    return sr_fail (err, errno, "mkdir /etc of the sandbox");
  for (size_t i = 0; sb_host_etc[i] != NULL; i++)
    if (show_host_path (rootfd, sb_host_etc[i], b, err) < 0)
      return -1;
  if (show_python_etc (rootfd, b, err) < 0)
    return -1;
  if (write_file (rootfd, "etc/passwd", passwd, err) < 0
      || write_file (rootfd, "etc/group", group, err) < 0
      || write_file (rootfd, "etc/hosts", hosts, err) < 0)
    return -1;
  return 0;
}

static int
mount_skeleton_tmpfs (const char *path, sr_error **err)
{
  if (mkdir (path, 0755) < 0 && errno != EEXIST)
    return sr_fail (err, errno, "mkdir \"%s\"", path);
  if (mount ("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
      < 0)
    return sr_fail (err, errno, "mount a tmpfs on \"%s\"", path);
  return 0;
}

/* The caller's root under an overlay whose upper layer (a tmpfs) takes the
 * mount points, so the directory itself is never written. */
static int
overlay_root (const struct sb_options *o, struct sb_bundle *b, sr_error **err)
{
  _cleanup_free_ char *lower = realpath (o->rootfs, NULL);
  struct stat st;

  if (lower == NULL || stat (lower, &st) < 0)
    return sr_fail (err, errno, "--rootfs \"%s\"", o->rootfs);
  if (!S_ISDIR (st.st_mode))
    return sr_fail (err, ENOTDIR, "--rootfs \"%s\"", o->rootfs);
  if (strpbrk (lower, ",:\\") != NULL)
    return sr_fail (err, EINVAL,
                    "--rootfs \"%s\": a path with ',', ':' or '\\' cannot be "
                    "an overlay layer",
                    o->rootfs);
  _cleanup_free_ char *up = xasprintf ("%s/root-upper", b->scratch);
  if (mount_skeleton_tmpfs (up, err) < 0)
    return -1;
  _cleanup_free_ char *upper = xasprintf ("%s/u", up);
  _cleanup_free_ char *work = xasprintf ("%s/w", up);
  if (mkdir (upper, 0755) < 0 || mkdir (work, 0755) < 0)
    return sr_fail (err, errno, "mkdir \"%s\"", up);
  _cleanup_free_ char *data
      = xasprintf ("lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
  if (mkdir (b->rootfs, 0755) < 0)
    return sr_fail (err, errno, "mkdir \"%s\"", b->rootfs);
  if (mount ("overlay", b->rootfs, "overlay", MS_NOSUID | MS_NODEV, data) < 0)
    return sr_fail (err, errno, "--rootfs \"%s\": mount an overlay on it",
                    o->rootfs);
  return 0;
}

/* The --ro-bind sources, bound (as the caller, who can reach them) under
 * SCRATCH/binds, which the container's unprivileged init can traverse. */
static int
bind_sources (const struct sb_options *o, struct sb_bundle *b, sr_error **err)
{
  _cleanup_free_ char *dir = xasprintf ("%s/binds", b->scratch);

  b->bind_sources = xcalloc (1, sizeof *b->bind_sources);
  if (o->ro_binds_len == 0)
    return 0;
  if (mount_skeleton_tmpfs (dir, err) < 0)
    return -1;
  for (size_t i = 0; i < o->ro_binds_len; i++)
    {
      struct stat st;
      _cleanup_free_ char *to = xasprintf ("%s/%zu", dir, i);
      const char *src = o->ro_binds[i].src;
      if (stat (src, &st) < 0)
        return sr_fail (err, errno, "--ro-bind \"%s\"", src);
      int r = S_ISDIR (st.st_mode)
                  ? mkdir (to, 0755)
                  : close (open (to, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
      if (r < 0)
        return sr_fail (err, errno, "--ro-bind \"%s\": mount point", src);
      if (mount (src, to, NULL, MS_BIND | MS_REC, NULL) < 0)
        return sr_fail (err, errno, "--ro-bind \"%s\"", src);
      strv_append (&b->bind_sources, to);
    }
  return 0;
}

int
sb_rootfs_make (const struct sb_options *o, struct sb_bundle *b,
                sr_error **err)
{
  static const char *const dirs[] = { "/proc", "/dev", "/tmp", "/work" };

  b->rootfs = xasprintf ("%s/root", b->scratch);
  if (o->rootfs != NULL ? overlay_root (o, b, err) < 0
                        : mount_skeleton_tmpfs (b->rootfs, err) < 0)
    return -1;
  _cleanup_close_ int rootfd
      = open (b->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return sr_fail (err, errno, "open \"%s\"", b->rootfs);
  if (o->rootfs == NULL && default_skeleton (rootfd, b, err) < 0)
    return -1;
  for (size_t i = 0; i < ARRAY_SIZE (dirs); i++)
    if (make_mount_point (rootfd, dirs[i], false, err) < 0)
      return -1;
  if (bind_sources (o, b, err) < 0)
    return -1;
  for (size_t i = 0; i < o->ro_binds_len; i++)
    {
      struct stat st;
      if (stat (o->ro_binds[i].src, &st) < 0)
        return sr_fail (err, errno, "--ro-bind \"%s\"", o->ro_binds[i].src);
      if (make_mount_point (rootfd, o->ro_binds[i].dst, !S_ISDIR (st.st_mode),
                            err)
          < 0)
        return sr_wrap (err, "--ro-bind \"%s:%s\"", o->ro_binds[i].src,
                        o->ro_binds[i].dst);
    }
  return 0;
}
