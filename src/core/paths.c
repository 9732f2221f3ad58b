/* maskedPaths and readonlyPaths, after the pivot.  The container's tree may
 * hold planted symlinks: every path is resolved with safepath under "/", and
 * the mask source is the container's /dev/null only once the opened inode is
 * verified to be the null device (CVE-2025-31133). */
#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/mountopt.h"
#include "core/rootfs.h"
#include "util/safepath.h"
#include "sandrun/util.h"

/* Open a listed path; 0 with *fd = -1 when it does not exist (skipped, as
 * runc does). */
static int
open_listed (int rootfd, const char *path, int *fd, sr_error **err)
{
  _cleanup_error_ sr_error *e = NULL;

  *fd = sr_open_in_root (rootfd, path, O_PATH, 0, &e);
  if (*fd >= 0)
    return 0;
  if (e->errnum == ENOENT || e->errnum == ENOTDIR)
    return 0;
  *err = steal_pointer (&e);
  return -1;
}

/* The container's /dev/null, opened without following a link and checked
 * to be the 1:3 character device: the fd pins what was checked. */
static int
open_null (int rootfd, sr_error **err)
{
  _cleanup_close_ int fd = sr_open_in_root (rootfd, "/dev/null",
                                            O_PATH | O_NOFOLLOW, 0, err);
  struct stat st;

  if (fd < 0)
    return -1;
  if (fstat (fd, &st) < 0)
    return sr_fail (err, errno, "stat \"/dev/null\"");
  if (!S_ISCHR (st.st_mode) || st.st_rdev != makedev (1, 3))
    return sr_fail (err, EPERM, "\"/dev/null\" is not the null device");
  return steal_fd (&fd);
}

static int
mask_one (int rootfd, const char *path, int *nullfd, sr_error **err)
{
  _cleanup_close_ int fd = -1;
  _cleanup_close_ int mnt = -1;
  struct stat st;

  if (open_listed (rootfd, path, &fd, err) < 0)
    return -1;
  if (fd < 0)
    return 0;
  if (fstat (fd, &st) < 0)
    return sr_fail (err, errno, "stat");
  struct sr_mount_at t = { rootfd, path, fd, NULL };
  if (S_ISDIR (st.st_mode))
    {
      struct sr_mount_opts o = { .flags = MS_RDONLY | MS_NOSUID | MS_NODEV
                                          | MS_NOEXEC };
      mnt = sr_mount_fs_at (&t, "tmpfs", "tmpfs", &o, err);
      return mnt < 0 ? -1 : 0;
    }
  if (*nullfd < 0)
    {
      *nullfd = open_null (rootfd, err);
      if (*nullfd < 0)
        return -1;
    }
  struct sr_mount_opts bind = { .flags = MS_BIND };
  mnt = sr_mount_bind_at (&t, *nullfd, "", &bind, err);
  return mnt < 0 ? -1 : 0;
}

int
sr_paths_mask (int rootfd, char *const *paths, sr_error **err)
{
  _cleanup_close_ int nullfd = -1;

  for (size_t i = 0; paths != NULL && paths[i] != NULL; i++)
    if (mask_one (rootfd, paths[i], &nullfd, err) < 0)
      return sr_wrap (err, "maskedPaths \"%s\"", paths[i]);
  return 0;
}

static int
readonly_one (int rootfd, const char *path, sr_error **err)
{
  _cleanup_close_ int fd = -1;
  _cleanup_close_ int mnt = -1;
  struct sr_mount_opts o = {
    .flags = MS_BIND | MS_REC | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
  };

  /* The submounts too, where the kernel can (mount_setattr). */
  if (sr_mount_api_available ())
    o.rec_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
                | MOUNT_ATTR_NOEXEC;
  if (open_listed (rootfd, path, &fd, err) < 0)
    return -1;
  if (fd < 0)
    return 0;
  struct sr_mount_at t = { rootfd, path, fd, NULL };
  mnt = sr_mount_bind_at (&t, fd, "", &o, err);
  return mnt < 0 ? -1 : 0;
}

int
sr_paths_readonly (int rootfd, char *const *paths, sr_error **err)
{
  for (size_t i = 0; paths != NULL && paths[i] != NULL; i++)
    if (readonly_one (rootfd, paths[i], err) < 0)
      return sr_wrap (err, "readonlyPaths \"%s\"", paths[i]);
  return 0;
}
