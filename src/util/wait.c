/* pidfd waits with a deadline: poll for the exit, then waitid(P_PIDFD). */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>

#include "sandrun/util.h"
#include "sandrun/wait.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* The ms left before `deadline` (-1: none), for poll. */
static int
time_left (int64_t deadline)
{
  if (deadline < 0)
    return -1;
  int64_t left = deadline - sr_monotonic_ms ();
  return left < 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int) left;
}

int
sr_wait_exit (int pidfd, int timeout_ms, struct sr_exit *ex, sr_error **err)
{
  int64_t deadline = timeout_ms < 0 ? -1 : sr_monotonic_ms () + timeout_ms;
  for (;;)
    {
      siginfo_t si;
      memset (&si, 0, sizeof si);
      /* Try first: the process may be gone already, and a deadline of 0
       * must still see it. */
      if (waitid (P_PIDFD, (id_t) pidfd, &si, WEXITED | WNOHANG) < 0)
        {
          if (errno == EINTR)
            continue;
          return sr_fail (err, errno, "wait for pidfd %d", pidfd);
        }
      if (si.si_pid != 0)
        {
          bool exited = si.si_code == CLD_EXITED;
          ex->code = exited ? si.si_status : -1;
          ex->signal = exited ? 0 : si.si_status;
          ex->core_dumped = si.si_code == CLD_DUMPED;
          return 0;
        }
      int left = time_left (deadline);
      if (left == 0)
        {
          /* ETIMEDOUT for the caller, without "Connection timed out". */
          sr_fail (err, 0, "still running at the %d ms deadline", timeout_ms);
          if (err != NULL && *err != NULL)
            (*err)->errnum = ETIMEDOUT;
          return -1;
        }
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      if (poll (&p, 1, left) < 0 && errno != EINTR)
        return sr_fail (err, errno, "wait for pidfd %d", pidfd);
    }
}

int
sr_wait_pidfd (int pidfd, int timeout_ms, int *exit_status, sr_error **err)
{
  struct sr_exit ex;
  if (sr_wait_exit (pidfd, timeout_ms, &ex, err) < 0)
    return -1;
  *exit_status = ex.signal != 0 ? 128 + ex.signal : ex.code;
  return 0;
}
