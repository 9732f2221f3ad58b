/* floor: the least a container start must do, as a yardstick for the
 * runtimes.  It clones a child into new mount, pid, ipc, uts and network
 * namespaces (those of `runc spec`'s config), makes ROOTFS its root with
 * pivot_root, mounts a fresh /proc, and execs ARGV; the parent waits and
 * exits with the child's status.  With -c CGROUP it also creates that cgroup
 * directory under each given hierarchy, moves the child into it and removes
 * it afterwards, as a runtime's cgroup work does at its least.
 *
 *   floor [-c DIR]... ROOTFS ARG...
 *
 * No error recovery beyond a message: it is a measuring stick, not a runtime. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CGROUPS 16

static const char *rootfs;
static char **child_argv;

static void
die (const char *what)
{
  fprintf (stderr, "floor: %s: %s\n", what, strerror (errno));
  _exit (127);
}

static int
child_main (void *arg)
{
  (void) arg;
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    die ("make / private");
  if (mount (rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    die ("bind the rootfs");
  if (chdir (rootfs) < 0)
    die ("chdir rootfs");
  if (syscall (SYS_pivot_root, ".", ".") < 0)
    die ("pivot_root");
  if (umount2 (".", MNT_DETACH) < 0)
    die ("detach the old root");
  if (chdir ("/") < 0)
    die ("chdir /");
  if (mount ("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)
      < 0)
    die ("mount /proc");
  execvp (child_argv[0], child_argv);
  die ("execvp");
  return 127;
}

static void
write_pid (const char *dir, pid_t pid)
{
  char path[4096], buf[32];
  int fd, n;

  snprintf (path, sizeof path, "%s/cgroup.procs", dir);
  fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    die (path);
  n = snprintf (buf, sizeof buf, "%d", pid);
  if (write (fd, buf, n) != n)
    die (path);
  close (fd);
}

int
main (int argc, char **argv)
{
  static char stack[64 * 1024];
  const char *cgroups[MAX_CGROUPS];
  int ncg = 0, opt, status, i;
  pid_t pid;

  while ((opt = getopt (argc, argv, "+c:")) != -1)
    {
      if (opt != 'c' || ncg == MAX_CGROUPS)
        {
          fprintf (stderr, "usage: floor [-c CGROUP-DIR]... ROOTFS ARG...\n");
          return 2;
        }
      cgroups[ncg++] = optarg;
    }
  if (argc - optind < 2)
    {
      fprintf (stderr, "usage: floor [-c CGROUP-DIR]... ROOTFS ARG...\n");
      return 2;
    }
  rootfs = argv[optind];
  child_argv = argv + optind + 1;
  for (i = 0; i < ncg; i++)
    if (mkdir (cgroups[i], 0755) < 0 && errno != EEXIST)
      die (cgroups[i]);

  pid = clone (child_main, stack + sizeof stack,
               CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
                   | CLONE_NEWNET | SIGCHLD,
               NULL);
  if (pid < 0)
    die ("clone");
  for (i = 0; i < ncg; i++)
    write_pid (cgroups[i], pid);
  if (waitpid (pid, &status, 0) < 0)
    die ("waitpid");
  for (i = 0; i < ncg; i++)
    rmdir (cgroups[i]);
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return WEXITSTATUS (status);
}
