/* idmap_probe PATH: whether the host can make an idmapped mount of PATH
 * (exit 0), or not (exit 1, the reason on stderr).  Independent of the
 * runtime under test: idmap.bats skips on its answer only when the kernel or
 * the filesystem cannot do it.  The mount is made detached and dropped. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
struct mount_attr
{
  unsigned long long attr_set, attr_clr, propagation, userns_fd;
};
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

static int
write_file (const char *path, const char *text)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  int ok = fd >= 0 && write (fd, text, strlen (text)) == (ssize_t) strlen (text);
  if (fd >= 0)
    close (fd);
  return ok ? 0 : -1;
}

/* A user namespace mapping 0-65535 to 100000-165535, from a child that
 * waits on `gate`. */
static int
make_userns (int gate[2], pid_t *pid)
{
  char path[64], c;

  *pid = (pid_t) syscall (SYS_clone, (unsigned long) (CLONE_NEWUSER | SIGCHLD), NULL, NULL,
                          NULL, 0);
  if (*pid == 0)
    {
      close (gate[1]);
      while (read (gate[0], &c, 1) < 0 && errno == EINTR)
        ;
      _exit (0);
    }
  if (*pid < 0)
    return -1;
  snprintf (path, sizeof path, "/proc/%d/uid_map", (int) *pid);
  if (write_file (path, "0 100000 65536\n") < 0)
    return -1;
  snprintf (path, sizeof path, "/proc/%d/gid_map", (int) *pid);
  if (write_file (path, "0 100000 65536\n") < 0)
    return -1;
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) *pid);
  return open (path, O_RDONLY | O_CLOEXEC);
}

int
main (int argc, char **argv)
{
  int gate[2], userns, tree;
  pid_t pid;

  if (argc != 2)
    {
      fprintf (stderr, "usage: idmap_probe PATH\n");
      return 2;
    }
  if (pipe2 (gate, O_CLOEXEC) < 0)
    return 2;
  userns = make_userns (gate, &pid);
  if (userns < 0)
    {
      perror ("idmap_probe: user namespace");
      return 1;
    }
  close (gate[1]);
  waitpid (pid, NULL, 0);
  tree = (int) syscall (SYS_open_tree, AT_FDCWD, argv[1], OPEN_TREE_CLONE | O_CLOEXEC);
  if (tree < 0)
    {
      perror ("idmap_probe: open_tree");
      return 1;
    }
  struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (unsigned) userns };
  if (syscall (SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &a, sizeof a) < 0)
    {
      fprintf (stderr, "idmap_probe: idmapped mount of %s: %s\n", argv[1], strerror (errno));
      return 1;
    }
  return 0;
}
