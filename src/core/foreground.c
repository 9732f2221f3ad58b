/* `run` in the foreground: wait for the init, relay signals to it, and when
 * the process has a terminal but no --console-socket was given, be the other
 * end of its pty (as runc does), copying between our stdio and the master. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "core/foreground.h"
#include "sandrun/util.h"

static const int relayed_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2,
                                       SIGWINCH, SIGCONT };

void
sr_foreground_block_signals (sigset_t *set, sigset_t *old)
{
  sigemptyset (set);
  for (size_t i = 0; i < ARRAY_SIZE (relayed_signals); i++)
    sigaddset (set, relayed_signals[i]);
  sigaddset (set, SIGCHLD);
  sigprocmask (SIG_BLOCK, set, old);
}

static bool
reap (pid_t pid, int *exit_status)
{
  int status;
  pid_t r;

  do
    r = waitpid (pid, &status, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r != pid)
    return r < 0; /* ECHILD: someone else reaped it */
  *exit_status = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
  return true;
}

/* Copy what is readable on `from` to `to`; false at EOF or error (a pty
 * master reads EIO once the last slave is closed). */
static bool
copy_some (int from, int to)
{
  char buf[8192];
  ssize_t n = read (from, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return true;
  if (n <= 0)
    return false;
  return sr_write_all (to, buf, (size_t) n) >= 0;
}

/* What the process wrote just before it exited; a process left outside a
 * pid namespace may still hold the terminal, so never block here. */
static void
drain (int master)
{
  char buf[8192];
  ssize_t n;

  if (master < 0 || fcntl (master, F_SETFL, O_NONBLOCK) < 0)
    return;
  while ((n = read (master, buf, sizeof buf)) > 0)
    if (sr_write_all (1, buf, (size_t) n) < 0)
      return;
}

static void
copy_window_size (int master)
{
  struct winsize ws;
  if (master >= 0 && ioctl (0, TIOCGWINSZ, &ws) == 0)
    ioctl (master, TIOCSWINSZ, &ws);
}

/* One signal from the signalfd: forward it, or note the child's exit. */
static bool
handle_signal (int sfd, pid_t pid, int master, int *exit_status)
{
  struct signalfd_siginfo si;
  if (read (sfd, &si, sizeof si) != sizeof si)
    return false;
  if (si.ssi_signo == SIGCHLD)
    return reap (pid, exit_status);
  if (si.ssi_signo == SIGWINCH && master >= 0)
    copy_window_size (master); /* the kernel tells the pty's foreground group */
  else
    kill (pid, (int) si.ssi_signo);
  return false;
}

int
sr_foreground_wait (pid_t pid, int master, const sigset_t *set)
{
  int exit_status = 255;
  _cleanup_close_ int sfd = signalfd (-1, set, SFD_CLOEXEC);
  bool stdin_open = master >= 0, exited = false;

  if (reap (pid, &exit_status))
    exited = true;
  copy_window_size (master);
  while (!exited)
    {
      struct pollfd fds[3] = {
        { .fd = sfd, .events = POLLIN },
        { .fd = master, .events = POLLIN },
        { .fd = stdin_open ? 0 : -1, .events = POLLIN },
      };
      if (poll (fds, 3, sfd < 0 ? 100 : -1) < 0 && errno != EINTR)
        break;
      if (sfd < 0)
        exited = reap (pid, &exit_status);
      else if (fds[0].revents & POLLIN)
        exited = handle_signal (sfd, pid, master, &exit_status);
      if (fds[1].revents & (POLLIN | POLLHUP | POLLERR) && !copy_some (master, 1))
        master = -1; /* the process closed its terminal; wait for the exit */
      if (fds[2].revents & (POLLIN | POLLHUP | POLLERR) && !copy_some (0, master))
        stdin_open = false;
    }
  drain (master);
  return exit_status;
}

int
sr_foreground_raw_terminal (struct termios *saved)
{
  struct termios raw;
  if (!isatty (0) || tcgetattr (0, saved) < 0)
    return -1;
  raw = *saved;
  cfmakeraw (&raw);
  tcsetattr (0, TCSANOW, &raw);
  return 0;
}

void
sr_foreground_restore_terminal (const struct termios *saved)
{
  tcsetattr (0, TCSANOW, saved);
}
