/* The watchdog (see watchdog.h). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "watchdog.h"
#include "sandrun/util.h"

#define MSG_STOP 0

static void
kill_and_wait (int pidfd)
{
  struct pollfd p = { .fd = pidfd, .events = POLLIN };
  syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
  poll (&p, 1, 5000);
}

static __attribute__ ((noreturn)) void
watch (const struct sr_globals *g, const struct sb_bundle *b, int fd)
{
  int pidfd = -1;
  pid_t pid;
  ssize_t n;

  while ((n = recv (fd, &pid, sizeof pid, 0)) == sizeof pid)
    {
      if (pid == MSG_STOP)
        _exit (0);
      pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
    }
  if (n < 0 && errno == EINTR)
    _exit (1);
  /* sandrun is gone without saying so. */
  if (pidfd >= 0)
    kill_and_wait (pidfd);
  sr_error *err = NULL;
  if (sr_container_delete (g, b->id, true, &err) < 0)
    sr_error_free (err);
  sb_bundle_remove_dir (b->scratch);
  sb_bundle_remove_dir (b->dir);
  _exit (0);
}

int
sb_watchdog_start (const struct sr_globals *g, const struct sb_bundle *b,
                   struct sb_watchdog *w, sr_error **err)
{
  int sv[2];

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return sr_fail (err, errno, "watchdog: socketpair");
  w->pid = fork ();
  if (w->pid < 0)
    {
      close (sv[0]);
      close (sv[1]);
      return sr_fail (err, errno, "watchdog: fork");
    }
  if (w->pid == 0)
    {
      int keep[] = { sv[1], b->lock_fd, b->slot_fd };
      /* Not the caller's stdio: it must see EOF when sandrun ends. */
      sr_close_fds_except (0, keep, ARRAY_SIZE (keep));
      watch (g, b, sv[1]);
    }
  close (sv[1]);
  w->fd = sv[0];
  return 0;
}

void
sb_watchdog_arm (struct sb_watchdog *w, pid_t init)
{
  if (w->fd >= 0)
    send (w->fd, &init, sizeof init, MSG_NOSIGNAL);
}

void
sb_watchdog_stop (struct sb_watchdog *w)
{
  pid_t stop = MSG_STOP;
  if (w->fd >= 0)
    send (w->fd, &stop, sizeof stop, MSG_NOSIGNAL);
  sr_close (w->fd);
  w->fd = -1;
  if (w->pid > 0)
    waitpid (w->pid, NULL, 0);
  w->pid = -1;
}
