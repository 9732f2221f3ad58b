/* CVE-2019-5736: run from a handle on the runtime binary that no container
 * process can write (see exeseal.h for the order of the methods). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "sandrun/exeseal.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

#define SELF_EXE "/proc/self/exe"
#define ALL_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

extern char **environ;

/* The commands during which a runtime process runs next to, or inside, a
 * container. */
static const char *const protected_commands[] = { "create", "run", "exec", "sandbox" };

bool
sr_exeseal_needed (const char *command)
{
  for (size_t i = 0; i < ARRAY_SIZE (protected_commands); i++)
    if (strcmp (command, protected_commands[i]) == 0)
      return true;
  return false;
}

static bool
fd_is_sealed_memfd (int fd)
{
  int seals = fcntl (fd, F_GET_SEALS);
  return seals >= 0 && (seals & ALL_SEALS) == ALL_SEALS;
}

/* Read-only through this mount: the mount's flags or the filesystem's. */
static bool
fd_on_readonly_mount (int fd)
{
  struct statvfs sv;
  return fstatvfs (fd, &sv) == 0 && (sv.f_flag & ST_RDONLY) != 0;
}

/* A read-only mount is not enough: on a read-only bind of a writable
 * filesystem (ostree's /usr) the inode is writable elsewhere, and every
 * open(O_WRONLY) a container tries through /proc/PID/exe takes write access
 * on it for an instant before the mount refuses (EROFS), long enough to make
 * an execve of the binary fail with ETXTBSY.  Only a read-only superblock
 * refuses before that.  A private clone of the mount with its own read-only
 * flag cleared shows the superblock's.  -1: cannot tell (no privilege, or a
 * detached mount the kernel will not clone). */
static int
self_on_readonly_superblock (void)
{
  struct mount_attr attr = { .attr_clr = MOUNT_ATTR_RDONLY };
  _cleanup_close_ int mnt
      = open_tree (AT_FDCWD, SELF_EXE, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (mnt < 0
      || mount_setattr (mnt, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
    return -1;
  return fd_on_readonly_mount (mnt);
}

/* An overlayfs without an upper layer has a read-only superblock: ours
 * (open_overlay_view) after the re-execution, which the check above cannot
 * clone. */
static bool
fd_on_readonly_overlay (int fd)
{
  struct statfs sf;
  return fd_on_readonly_mount (fd) && fstatfs (fd, &sf) == 0
         && sf.f_type == OVERLAYFS_SUPER_MAGIC;
}

const char *
sr_exeseal_protection (void)
{
  _cleanup_close_ int fd = open (SELF_EXE, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  if (fd_is_sealed_memfd (fd))
    return "sealed memfd";
  if (!fd_on_readonly_mount (fd))
    return NULL;
  int ro_sb = self_on_readonly_superblock ();
  if (ro_sb > 0)
    return "read-only filesystem";
  if (ro_sb < 0 && fd_on_readonly_overlay (fd))
    return "read-only overlay";
  return NULL;
}

/* Overlayfs refuses a single lower layer without an upper one; the second,
 * below the binary's directory, only has to exist, be a directory and not
 * overlap it.  /dev is everywhere, and a binary under /dev fails over to
 * the memfd copy. */
#define FILLER_LAYER "/dev"

/* lowerdir separates layers with ':' and escapes with '\'; the kernels
 * that take the option as "key=value,..." also split at ','. */
static char *
overlay_escape (const char *dir)
{
  char *out = xmalloc (2 * strlen (dir) + 1), *o = out;
  for (const char *c = dir; *c != '\0'; c++)
    {
      if (*c == '\\' || *c == ':' || *c == ',')
        *o++ = '\\';
      *o++ = *c;
    }
  *o = '\0';
  return out;
}

/* The file /proc/self/exe names must still be the image we run (not a
 * newer binary installed over it since): same size and change time. */
static int
check_same_image (int fd, sr_error **err)
{
  struct stat a, b;
  if (stat (SELF_EXE, &a) < 0 || fstat (fd, &b) < 0)
    return sr_fail (err, errno, "stat \"%s\"", SELF_EXE);
  if (!S_ISREG (b.st_mode) || a.st_size != b.st_size
      || a.st_mtim.tv_sec != b.st_mtim.tv_sec
      || a.st_mtim.tv_nsec != b.st_mtim.tv_nsec
      || a.st_ctim.tv_sec != b.st_ctim.tv_sec
      || a.st_ctim.tv_nsec != b.st_ctim.tv_nsec)
    return sr_fail (err, ESTALE,
                    "the binary's path no longer names the running image");
  return 0;
}

/* The binary seen through a private, read-only overlayfs whose top layer is
 * its directory: a distinct inode (nothing a container does to it touches
 * the binary's own), no copy, and a mount attached nowhere (it lives as
 * long as the files that use it). */
static int
open_overlay_view (sr_error **err)
{
  char path[PATH_MAX];
  ssize_t n = readlink (SELF_EXE, path, sizeof path - 1);
  if (n < 0)
    return sr_fail (err, errno, "readlink \"%s\"", SELF_EXE);
  path[n] = '\0';
  char *slash = strrchr (path, '/');
  if (path[0] != '/' || slash == NULL || slash == path)
    return sr_fail (err, EINVAL, "no overlay for a binary at \"%s\"", path);
  *slash = '\0';
  const char *name = slash + 1;
  _cleanup_free_ char *dir = overlay_escape (path);
  _cleanup_free_ char *lower = xasprintf ("%s:%s", dir, FILLER_LAYER);

  _cleanup_close_ int ctx = fsopen ("overlay", FSOPEN_CLOEXEC);
  if (ctx < 0)
    return sr_fail (err, errno, "fsopen overlay");
  if (fsconfig (ctx, FSCONFIG_SET_STRING, "lowerdir", lower, 0) < 0)
    return sr_fail (err, errno, "overlay lowerdir=%s", lower);
  /* Inode number mapping buys nothing here and logs to dmesg when the
   * layers are on different filesystems. */
  (void)fsconfig (ctx, FSCONFIG_SET_STRING, "xino", "off", 0);
  if (fsconfig (ctx, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return sr_fail (err, errno, "create the overlay of \"%s\"", path);
  _cleanup_close_ int mnt
      = fsmount (ctx, FSMOUNT_CLOEXEC,
                 MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID);
  if (mnt < 0)
    return sr_fail (err, errno, "fsmount the overlay of \"%s\"", path);
  _cleanup_close_ int fd
      = openat (mnt, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return sr_fail (err, errno, "open \"%s\" in the overlay", name);
  if (check_same_image (fd, err) < 0)
    return -1;
  if (!fd_on_readonly_overlay (fd))
    return sr_fail (err, EROFS, "the overlay of \"%s\" is not read-only",
                    path);
  return steal_fd (&fd);
}

static int
new_memfd (sr_error **err)
{
  int fd = memfd_create ("sandrun", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
  /* Before Linux 6.3 every memfd is executable and MFD_EXEC is unknown. */
  if (fd < 0 && errno == EINVAL)
    fd = memfd_create ("sandrun", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return sr_fail (err, errno, "memfd_create");
  return fd;
}

static int
copy_all (int from, int to, sr_error **err)
{
  char buf[65536];
  for (;;)
    {
      ssize_t n = sendfile (to, from, NULL, 1 << 30);
      if (n > 0)
        continue;
      if (n == 0)
        return 0;
      if (errno == EINTR)
        continue;
      if (errno != EINVAL && errno != ENOSYS)
        return sr_fail (err, errno, "copy \"%s\"", SELF_EXE);
      break;
    }
  for (;;)
    {
      ssize_t n = read (from, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return sr_fail (err, errno, "read \"%s\"", SELF_EXE);
      if (n == 0)
        return 0;
      if (sr_write_all (to, buf, (size_t) n) < 0)
        return sr_fail (err, errno, "copy \"%s\"", SELF_EXE);
    }
}

/* A private copy: costs the binary's size in memory, once per start. */
static int
copy_to_sealed_memfd (sr_error **err)
{
  _cleanup_close_ int src = open (SELF_EXE, O_RDONLY | O_CLOEXEC);
  if (src < 0)
    return sr_fail (err, errno, "open \"%s\"", SELF_EXE);
  _cleanup_close_ int fd = new_memfd (err);
  if (fd < 0 || copy_all (src, fd, err) < 0)
    return -1;
  if (fcntl (fd, F_ADD_SEALS, ALL_SEALS) < 0)
    return sr_fail (err, errno, "seal the memfd copy of \"%s\"", SELF_EXE);
  return steal_fd (&fd);
}

/* Returns only on failure.  The marker holds our pid, which the exec keeps:
 * a marker inherited from elsewhere is not ours and is ignored. */
static int
reexec_from (int fd, char **argv, sr_error **err)
{
  char pid[32];
  snprintf (pid, sizeof pid, "%d", (int) getpid ());
  if (setenv (SR_EXESEAL_ENV, pid, 1) < 0)
    return sr_fail (err, errno, "setenv %s", SR_EXESEAL_ENV);
  fexecve (fd, argv, environ);
  int saved = errno;
  unsetenv (SR_EXESEAL_ENV);
  return sr_fail (err, saved, "re-execute from the protected binary");
}

/* fexecve names the process after the fd ("3"): give it back its name, for
 * ps, pgrep and the engines' logs. */
static void
restore_name (char **argv)
{
  if (argv[0] == NULL)
    return;
  const char *slash = strrchr (argv[0], '/');
  prctl (PR_SET_NAME, slash != NULL ? slash + 1 : argv[0], 0, 0, 0);
}

/* Re-execute from the first protected handle we can get; returns only when
 * none worked. */
static int
reexec_protected (char **argv, sr_error **err)
{
  static const struct
  {
    const char *name;
    int (*open) (sr_error **);
  } methods[] = {
    { "a read-only overlay", open_overlay_view },
    { "a sealed memfd copy", copy_to_sealed_memfd },
  };
  _cleanup_error_ sr_error *last = NULL;

  for (size_t i = 0; i < ARRAY_SIZE (methods); i++)
    {
      sr_error_freep (&last);
      _cleanup_close_ int fd = methods[i].open (&last);
      if (fd >= 0)
        {
          sr_debug ("runtime binary: re-executing from %s", methods[i].name);
          reexec_from (fd, argv, &last);
        }
      sr_debug ("runtime binary: %s: %s", methods[i].name, last->msg);
    }
  return sr_fail (err, 0, "cannot protect the runtime binary (CVE-2019-5736): %s", last->msg);
}

int
sr_exeseal_ensure (const char *command, char **argv, sr_error **err)
{
  const char *marker = getenv (SR_EXESEAL_ENV);
  long pid;
  bool reexecuted = marker != NULL && sr_parse_long (marker, &pid) == 0 && pid == getpid ();

  if (marker != NULL)
    unsetenv (SR_EXESEAL_ENV);
  if (reexecuted)
    restore_name (argv);
  if (!sr_exeseal_needed (command))
    return 0;
  const char *how = sr_exeseal_protection ();
  if (how != NULL)
    {
      sr_debug ("runtime binary: %s", how);
      return 0;
    }
  if (reexecuted)
    return sr_fail (err, 0, "the runtime binary is still writable after its re-execution");
  return reexec_protected (argv, err);
}
