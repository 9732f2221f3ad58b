/* rusage: run ARGV with stdin, stdout and stderr on /dev/null, wait for it
 * and print "WALL_NS CPU_US MAXRSS_KIB STATUS" on fd 3.  The harness spawns
 * this small program rather than the command itself because a child of the
 * Python harness inherits the interpreter's memory high-water mark at exec
 * time, which would hide the command's own peak RSS.  CPU is user+system of
 * the command and every descendant it reaped (a runtime's container init). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  struct timespec t0, t1;
  struct rusage ru;
  int status, null;
  pid_t pid;

  if (argc < 2)
    {
      fprintf (stderr, "usage: rusage ARG...\n");
      return 2;
    }
  null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  clock_gettime (CLOCK_MONOTONIC, &t0);
  pid = fork ();
  if (pid == 0)
    {
      dup2 (null, 0);
      dup2 (null, 1);
      dup2 (null, 2);
      close (3);
      execvp (argv[1], argv + 1);
      _exit (127);
    }
  if (pid < 0 || wait4 (pid, &status, 0, &ru) < 0)
    {
      perror ("rusage");
      return 1;
    }
  clock_gettime (CLOCK_MONOTONIC, &t1);
  dprintf (3, "%lld %lld %ld %d\n",
           (long long) (t1.tv_sec - t0.tv_sec) * 1000000000LL
               + (t1.tv_nsec - t0.tv_nsec),
           (long long) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL
               + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec,
           ru.ru_maxrss,
           WIFSIGNALED (status) ? 128 + WTERMSIG (status)
                                : WEXITSTATUS (status));
  return 0;
}
