/* process.terminal: the init allocates a pty from the container's own devpts
 * (so the pty belongs to the container, runc#814), hands the master to the
 * engine over --console-socket and makes the slave its controlling terminal
 * and stdio.  The slave is reached with TIOCGPTPEER, never by a path the
 * container could have prepared. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include "util/fdpass.h"
#include "core/terminal.h"
#include "sandrun/util.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO ('T', 0x41)
#endif

#define PTMX_MAJOR 5
#define PTMX_MINOR 2
/* UNIX98_PTY_SLAVE_MAJOR and the 7 majors after it. */
#define PTS_MAJOR_FIRST 136
#define PTS_MAJOR_LAST 143

/* What runc sends as the payload next to the master: the master's name.
 * Engines (containerd's go-runc, conmon) only use it as a label. */
#define MASTER_NAME "/dev/ptmx"

static int
open_ptmx (sr_error **err)
{
  _cleanup_close_ int fd = -1;
  struct stat st;

  fd = open ("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return sr_fail (err, errno, "open /dev/ptmx");
  if (fstat (fd, &st) < 0)
    return sr_fail (err, errno, "fstat /dev/ptmx");
  if (!S_ISCHR (st.st_mode) || major (st.st_rdev) != PTMX_MAJOR
      || minor (st.st_rdev) != PTMX_MINOR)
    return sr_fail (err, ENOTTY, "/dev/ptmx is not the pty multiplexer");
  return steal_fd (&fd);
}

/* A slave of a devpts instance, and with index `n` when n >= 0. */
static int
check_pts (int fd, int n, sr_error **err)
{
  struct statfs sfs;
  struct stat st;

  if (fstatfs (fd, &sfs) < 0 || fstat (fd, &st) < 0)
    return sr_fail (err, errno, "stat the pty slave");
  if (sfs.f_type != DEVPTS_SUPER_MAGIC || !S_ISCHR (st.st_mode)
      || major (st.st_rdev) < PTS_MAJOR_FIRST
      || major (st.st_rdev) > PTS_MAJOR_LAST)
    return sr_fail (err, ENOTTY, "the pty slave is not on devpts");
  if (n >= 0
      && (int) ((major (st.st_rdev) - PTS_MAJOR_FIRST) * 256
                + minor (st.st_rdev))
             != n)
    return sr_fail (err, ENOTTY, "the pty slave is not pts %d", n);
  return 0;
}

/* Kernels before 4.13 lack TIOCGPTPEER: open /dev/pts/N by name, then check
 * that what was opened really is slave N of a devpts. */
static int
open_peer_by_name (int master, sr_error **err)
{
  _cleanup_close_ int fd = -1;
  char path[64];
  int n;

  if (ioctl (master, TIOCGPTN, &n) < 0)
    return sr_fail (err, errno, "ioctl TIOCGPTN");
  snprintf (path, sizeof path, "/dev/pts/%d", n);
  fd = open (path, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return sr_fail (err, errno, "open %s", path);
  if (check_pts (fd, n, err) < 0)
    return -1;
  return steal_fd (&fd);
}

static int
open_peer (int master, sr_error **err)
{
  _cleanup_close_ int fd = -1;
  int unlock = 0;

  /* grantpt is a no-op on devpts; unlockpt is this ioctl. */
  if (ioctl (master, TIOCSPTLCK, &unlock) < 0)
    return sr_fail (err, errno, "unlock the pty");
  fd = ioctl (master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    {
      if (errno != EINVAL && errno != ENOTTY)
        return sr_fail (err, errno, "ioctl TIOCGPTPEER");
      return open_peer_by_name (master, err);
    }
  if (check_pts (fd, -1, err) < 0)
    return -1;
  return steal_fd (&fd);
}

static int
set_console_size (int master, const oci_console_size *size, sr_error **err)
{
  struct winsize ws = { 0 };

  /* runc applies the size only when both are given. */
  if (size == NULL || size->height == 0 || size->width == 0)
    return 0;
  ws.ws_row = (unsigned short) size->height;
  ws.ws_col = (unsigned short) size->width;
  if (ioctl (master, TIOCSWINSZ, &ws) < 0)
    return sr_fail (err, errno, "set the console size to %ux%u", size->width,
                    size->height);
  return 0;
}

/* ---- /dev/console -------------------------------------------------------- */

/* An O_PATH handle on /dev/console, created as an empty file when missing.
 * It must not be a symlink: a container could point it at a procfs file and
 * have the pty mounted over it, unmasking what masked paths hide
 * (CVE-2025-52565).  O_NOFOLLOW|O_PATH opens a symlink itself, so the
 * check below sees it. */
static int
open_console_target (sr_error **err)
{
  _cleanup_close_ int fd = -1;
  struct statfs sfs;
  struct stat st;

  fd = open ("/dev/console", O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    {
      /* O_EXCL never follows a symlink: a dangling one gives EEXIST. */
      int c = open ("/dev/console",
                    O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (c < 0)
        return sr_fail (err, errno, "create /dev/console");
      sr_close (c);
      fd = open ("/dev/console", O_PATH | O_NOFOLLOW | O_CLOEXEC);
    }
  if (fd < 0)
    return sr_fail (err, errno, "open /dev/console");
  if (fstat (fd, &st) < 0 || fstatfs (fd, &sfs) < 0)
    return sr_fail (err, errno, "stat /dev/console");
  if (S_ISLNK (st.st_mode))
    return sr_fail (err, ELOOP, "/dev/console is a symlink");
  if (!S_ISREG (st.st_mode) && !S_ISCHR (st.st_mode))
    return sr_fail (err, EINVAL, "/dev/console is neither a file nor a device");
  if (sfs.f_type == PROC_SUPER_MAGIC || sfs.f_type == SYSFS_MAGIC)
    return sr_fail (err, EINVAL, "/dev/console is on procfs or sysfs");
  return steal_fd (&fd);
}

/* Bind the slave over the verified target, both by fd: no path is looked
 * up again between the check and the mount. */
static int
bind_fd_onto_fd (int source, int target, sr_error **err)
{
  _cleanup_close_ int tree = -1;
  char src[64], dst[64];

  tree = open_tree (source, "",
                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (tree >= 0)
    {
      if (move_mount (tree, "", target, "",
                      MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)
          < 0)
        return sr_fail (err, errno, "move_mount the pty onto /dev/console");
      return 0;
    }
  if (errno != ENOSYS)
    return sr_fail (err, errno, "open_tree the pty slave");

  /* Kernels before 5.2: the magic links of the fds still name exactly the
   * two files checked. */
  snprintf (src, sizeof src, "/proc/self/fd/%d", source);
  snprintf (dst, sizeof dst, "/proc/self/fd/%d", target);
  if (mount (src, dst, NULL, MS_BIND, NULL) < 0)
    return sr_fail (err, errno, "bind mount the pty onto /dev/console");
  return 0;
}

static int
mount_console (int slave, sr_error **err)
{
  _cleanup_close_ int target = open_console_target (err);

  if (target < 0)
    return -1;
  return bind_fd_onto_fd (slave, target, err);
}

/* ---- stdio --------------------------------------------------------------- */

/* With stdio closed, the pty could land on 0..2 and be clobbered by the
 * dups below: keep both ends above. */
static int
fd_above_stdio (int *fd, sr_error **err)
{
  int moved;

  if (*fd > 2)
    return 0;
  moved = fcntl (*fd, F_DUPFD_CLOEXEC, 3);
  if (moved < 0)
    return sr_fail (err, errno, "dup the pty");
  sr_close (*fd);
  *fd = moved;
  return 0;
}

static int
make_controlling_stdio (int slave, sr_error **err)
{
  /* The init may already lead its session (a setns'd exec helper that
   * called setsid before): that is what setsid would give. */
  if (setsid () < 0 && !(errno == EPERM && getsid (0) == getpid ()))
    return sr_fail (err, errno, "setsid");
  if (ioctl (slave, TIOCSCTTY, 0) < 0)
    return sr_fail (err, errno, "ioctl TIOCSCTTY");
  for (int fd = 0; fd <= 2; fd++)
    if (dup3 (slave, fd, 0) < 0)
      return sr_fail (err, errno, "dup the pty slave onto fd %d", fd);
  return 0;
}

int
sr_terminal_setup (const oci_process *p, int console_socket, bool bind_console,
                   sr_error **err)
{
  _cleanup_close_ int master = -1;
  _cleanup_close_ int slave = -1;

  if (console_socket < 0)
    return sr_fail (err, EINVAL,
                    "process.terminal is set but there is no console socket");
  master = open_ptmx (err);
  if (master < 0 || fd_above_stdio (&master, err) < 0)
    return sr_wrap (err, "terminal");
  slave = open_peer (master, err);
  if (slave < 0 || fd_above_stdio (&slave, err) < 0)
    return sr_wrap (err, "terminal");
  if (set_console_size (master, p->console_size, err) < 0
      || (bind_console && mount_console (slave, err) < 0))
    return sr_wrap (err, "terminal");
  if (sr_send_fd (console_socket, master, MASTER_NAME, strlen (MASTER_NAME),
                  err)
      < 0)
    return sr_wrap (err, "send the pty master to the console socket");
  if (make_controlling_stdio (slave, err) < 0)
    return sr_wrap (err, "terminal");
  return 0;
}
