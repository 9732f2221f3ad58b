/* Tests of the core's API for callers that stay alive (the sandbox layer):
 * waits with a deadline on a pidfd. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandrun/util.h"
#include "sandrun/wait.h"
#include "unit.h"

static int
pidfd_of (pid_t pid)
{
  return (int) syscall (SYS_pidfd_open, pid, 0);
}

/* A child that runs `what`: 'x' exits 7, 'k' kills itself, 's' sleeps. */
static pid_t
child (char what)
{
  pid_t pid = fork ();
  if (pid != 0)
    return pid;
  if (what == 'x')
    _exit (7);
  if (what == 'k')
    raise (SIGKILL);
  pause ();
  _exit (0);
}

static void
test_wait (void)
{
  sr_error *err = NULL;
  int status = -1;

  pid_t pid = child ('x');
  int fd = pidfd_of (pid);
  CHECK (sr_wait_pidfd (fd, -1, &status, &err) == 0 && status == 7,
         "wait without a deadline: exit status 7 (%d)", status);
  CHECK (waitpid (pid, NULL, WNOHANG) < 0 && errno == ECHILD,
         "the child was reaped");
  close (fd);

  pid = child ('k');
  fd = pidfd_of (pid);
  struct sr_exit ex = { 0 };
  CHECK (sr_wait_exit (fd, 10000, &ex, &err) == 0 && ex.code == -1
             && ex.signal == SIGKILL && !ex.core_dumped,
         "a signal ends it: code -1, signal 9");
  close (fd);

  pid = child ('s');
  fd = pidfd_of (pid);
  CHECK (sr_wait_pidfd (fd, 0, &status, &err) < 0 && err != NULL
             && err->errnum == ETIMEDOUT,
         "deadline 0 on a running process: ETIMEDOUT");
  sr_error_free (err);
  err = NULL;
  CHECK (sr_wait_pidfd (fd, 50, &status, &err) < 0 && err != NULL
             && err->errnum == ETIMEDOUT,
         "deadline 50 ms: ETIMEDOUT (%s)", err ? err->msg : "");
  sr_error_free (err);
  err = NULL;
  CHECK (kill (pid, 0) == 0, "the process is left running after a timeout");
  kill (pid, SIGKILL);
  CHECK (sr_wait_pidfd (fd, -1, &status, &err) == 0 && status == 128 + 9,
         "then killed: 128+9 (%d)", status);
  close (fd);

  fd = pidfd_of (getppid ());
  CHECK (fd < 0 || sr_wait_pidfd (fd, 0, &status, &err) < 0,
         "not a child: an error, never a status");
  sr_error_free (err);
  if (fd >= 0)
    close (fd);
}

int
main (void)
{
  test_wait ();
  return unit_finish ();
}
