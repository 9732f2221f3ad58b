#include <signal.h>

#include "sandrun/error.h"
#include "sandrun/signals.h"
#include "unit.h"

static int
parse (const char *name)
{
  int signo = -1;
  sr_error *err = NULL;

  if (sr_signal_parse (name, &signo, &err) < 0)
    {
      sr_error_free (err);
      return -1;
    }
  return signo;
}

static void
test_names (void)
{
  CHECK (parse ("TERM") == SIGTERM, "TERM");
  CHECK (parse ("SIGTERM") == SIGTERM, "SIGTERM");
  CHECK (parse ("sigterm") == SIGTERM, "sigterm (any case, like runc)");
  CHECK (parse ("Kill") == SIGKILL, "Kill");
  CHECK (parse ("SIGCHLD") == SIGCHLD, "SIGCHLD");
  CHECK (parse ("CLD") == SIGCHLD, "CLD alias");
  CHECK (parse ("IOT") == SIGABRT, "IOT alias");
  CHECK (parse ("WINCH") == SIGWINCH, "WINCH");
  CHECK (parse ("SIGSYS") == SIGSYS, "SIGSYS");
}

static void
test_numbers (void)
{
  CHECK (parse ("15") == 15, "15");
  CHECK (parse ("9") == 9, "9");
  CHECK (parse ("1") == 1, "1");
  CHECK (parse ("64") == SIGRTMAX, "64 (SIGRTMAX)");
  CHECK (parse ("0") == 0, "0 taken (a liveness probe, as kill(2))");
  CHECK (parse ("-1") == -1, "-1 rejected");
  CHECK (parse ("65") == -1, "65 rejected");
  CHECK (parse ("99999999999999999999") == -1, "overflow rejected");
  CHECK (parse ("15x") == -1, "15x rejected");
}

static void
test_realtime (void)
{
  CHECK (parse ("RTMIN") == SIGRTMIN, "RTMIN");
  CHECK (parse ("RTMIN+3") == SIGRTMIN + 3, "RTMIN+3");
  CHECK (parse ("SIGRTMAX-2") == SIGRTMAX - 2, "SIGRTMAX-2");
  CHECK (parse ("sigrtmax") == SIGRTMAX, "sigrtmax");
  CHECK (parse ("RTMIN-1") == -1, "RTMIN-1 rejected");
  CHECK (parse ("RTMAX+1") == -1, "RTMAX+1 rejected");
  CHECK (parse ("RTMIN+") == -1, "RTMIN+ rejected");
  CHECK (parse ("RTMIN+99") == -1, "RTMIN+99 rejected");
  CHECK (parse ("RTMIN+-1") == -1, "RTMIN+-1 rejected");
}

static void
test_garbage (void)
{
  sr_error *err = NULL;
  int signo = 0;

  CHECK (sr_signal_parse ("FOO", &signo, &err) == -1, "FOO rejected");
  CHECK_STR (err ? err->msg : NULL, "unknown signal \"FOO\"", "FOO message");
  sr_error_free (err);
  CHECK (parse ("") == -1, "empty rejected");
  CHECK (parse ("SIG") == -1, "SIG rejected");
  CHECK (parse ("SIGSIGTERM") == -1, "SIGSIGTERM rejected");
  CHECK (parse (" TERM") == -1, "leading space rejected");
  CHECK (parse ("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA") == -1,
         "long name rejected");
}

static void
test_reverse (void)
{
  int n;

  CHECK_STR (sr_signal_name (SIGTERM), "SIGTERM", "name of 15");
  CHECK_STR (sr_signal_name (SIGCHLD), "SIGCHLD", "name of SIGCHLD");
  CHECK_STR (sr_signal_name (SIGABRT), "SIGABRT", "name of SIGABRT");
  CHECK_STR (sr_signal_name (SIGRTMIN), "SIGRTMIN", "name of SIGRTMIN");
  CHECK_STR (sr_signal_name (SIGRTMIN + 3), "SIGRTMIN+3", "RTMIN+3");
  CHECK_STR (sr_signal_name (SIGRTMAX - 2), "SIGRTMAX-2", "RTMAX-2");
  CHECK_STR (sr_signal_name (SIGRTMAX), "SIGRTMAX", "RTMAX");
  CHECK (sr_signal_name (0) == NULL, "0 has no name");
  CHECK (sr_signal_name (SIGRTMAX + 1) == NULL, "65 has no name");

  /* Every name round-trips. */
  for (n = 1; n <= SIGRTMAX; n++)
    {
      const char *name = sr_signal_name (n);
      if (name != NULL && parse (name) != n)
        CHECK (0, "round trip of %d (%s)", n, name);
    }
  CHECK (1, "names round-trip");
}

int
main (void)
{
  test_names ();
  test_numbers ();
  test_realtime ();
  test_garbage ();
  test_reverse ();
  return unit_finish ();
}
