/* Signal names <-> numbers, accepting what runc's `kill` accepts (a name
 * with or without the SIG prefix, in any case, or a number) plus the
 * real-time forms of kill(1): "RTMIN", "RTMIN+3", "SIGRTMAX-2". */
#include <ctype.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandrun/signals.h"
#include "sandrun/util.h"

struct signal_name
{
  const char *name; /* "SIGHUP": prefixed, as sr_signal_name returns it */
  int signo;
};

/* The first entry for a number is its canonical name; aliases follow. */
static const struct signal_name signal_names[] = {
  { "SIGHUP", SIGHUP },       { "SIGINT", SIGINT },
  { "SIGQUIT", SIGQUIT },     { "SIGILL", SIGILL },
  { "SIGTRAP", SIGTRAP },     { "SIGABRT", SIGABRT },
  { "SIGIOT", SIGIOT },       { "SIGBUS", SIGBUS },
  { "SIGFPE", SIGFPE },       { "SIGKILL", SIGKILL },
  { "SIGUSR1", SIGUSR1 },     { "SIGSEGV", SIGSEGV },
  { "SIGUSR2", SIGUSR2 },     { "SIGPIPE", SIGPIPE },
  { "SIGALRM", SIGALRM },     { "SIGTERM", SIGTERM },
#ifdef SIGSTKFLT
  { "SIGSTKFLT", SIGSTKFLT },
#endif
  { "SIGCHLD", SIGCHLD },     { "SIGCLD", SIGCHLD },
  { "SIGCONT", SIGCONT },     { "SIGSTOP", SIGSTOP },
  { "SIGTSTP", SIGTSTP },     { "SIGTTIN", SIGTTIN },
  { "SIGTTOU", SIGTTOU },     { "SIGURG", SIGURG },
  { "SIGXCPU", SIGXCPU },     { "SIGXFSZ", SIGXFSZ },
  { "SIGVTALRM", SIGVTALRM }, { "SIGPROF", SIGPROF },
  { "SIGWINCH", SIGWINCH },   { "SIGIO", SIGIO },
  { "SIGPOLL", SIGPOLL },
#ifdef SIGPWR
  { "SIGPWR", SIGPWR },
#endif
  { "SIGSYS", SIGSYS },
};

/* Real-time names, as bash's `kill -l` prints them: the lower half counts up
 * from RTMIN, the upper half down from RTMAX. */
static const char *const rtmin_names[] = {
  "SIGRTMIN",    "SIGRTMIN+1",  "SIGRTMIN+2",  "SIGRTMIN+3",
  "SIGRTMIN+4",  "SIGRTMIN+5",  "SIGRTMIN+6",  "SIGRTMIN+7",
  "SIGRTMIN+8",  "SIGRTMIN+9",  "SIGRTMIN+10", "SIGRTMIN+11",
  "SIGRTMIN+12", "SIGRTMIN+13", "SIGRTMIN+14", "SIGRTMIN+15",
};
static const char *const rtmax_names[] = {
  "SIGRTMAX",    "SIGRTMAX-1",  "SIGRTMAX-2",  "SIGRTMAX-3",
  "SIGRTMAX-4",  "SIGRTMAX-5",  "SIGRTMAX-6",  "SIGRTMAX-7",
  "SIGRTMAX-8",  "SIGRTMAX-9",  "SIGRTMAX-10", "SIGRTMAX-11",
  "SIGRTMAX-12", "SIGRTMAX-13", "SIGRTMAX-14", "SIGRTMAX-15",
};

static bool
signo_valid (long n)
{
  return n >= 0 && n <= SIGRTMAX; /* 0: a liveness probe, as kill(2) */
}

/* "RTMIN", "RTMIN+3", "RTMAX-2" (prefix already stripped, upper case). */
static int
parse_realtime (const char *s, int *signo)
{
  int base, sign;
  long off = 0;

  if (str_has_prefix (s, "RTMIN"))
    base = SIGRTMIN, sign = 1;
  else if (str_has_prefix (s, "RTMAX"))
    base = SIGRTMAX, sign = -1;
  else
    return -1;

  s += strlen ("RTMIN");
  if (*s != '\0')
    {
      /* Only the direction that stays in range, as kill(1) does. */
      if (*s != (sign > 0 ? '+' : '-') || !isdigit ((unsigned char) s[1])
          || sr_parse_long (s + 1, &off) < 0)
        return -1;
    }
  if (off > SIGRTMAX - SIGRTMIN)
    return -1;
  *signo = base + sign * (int) off;
  return 0;
}

static int
parse_name (const char *name, int *signo)
{
  char up[32];
  const char *s;
  size_t i, len = strlen (name);

  if (len == 0 || len >= sizeof up)
    return -1;
  for (i = 0; i <= len; i++)
    up[i] = (char) toupper ((unsigned char) name[i]);

  s = str_has_prefix (up, "SIG") ? up + 3 : up;
  for (i = 0; i < ARRAY_SIZE (signal_names); i++)
    if (strcmp (s, signal_names[i].name + 3) == 0)
      {
        *signo = signal_names[i].signo;
        return 0;
      }
  return parse_realtime (s, signo);
}

int
sr_signal_parse (const char *name, int *signo, sr_error **err)
{
  long n;

  if (name != NULL && isdigit ((unsigned char) name[0])
      && sr_parse_long (name, &n) == 0)
    {
      if (signo_valid (n))
        {
          *signo = (int) n;
          return 0;
        }
    }
  else if (name != NULL && parse_name (name, signo) == 0)
    return 0;

  return sr_fail (err, 0, "unknown signal \"%s\"", name ? name : "");
}

const char *
sr_signal_name (int signo)
{
  size_t i;

  for (i = 0; i < ARRAY_SIZE (signal_names); i++)
    if (signal_names[i].signo == signo)
      return signal_names[i].name;

  if (signo >= SIGRTMIN && signo <= SIGRTMAX)
    {
      int up = signo - SIGRTMIN, down = SIGRTMAX - signo;
      if (up <= down && (size_t) up < ARRAY_SIZE (rtmin_names))
        return rtmin_names[up];
      if ((size_t) down < ARRAY_SIZE (rtmax_names))
        return rtmax_names[down];
      if ((size_t) up < ARRAY_SIZE (rtmin_names))
        return rtmin_names[up];
    }
  return NULL;
}

/* The raw syscall: glibc's sigaction refuses 32 and 33, which it keeps for
 * itself, yet the runtime may have inherited them ignored (make does that)
 * and a musl or Go program in the container uses them.  An all-zero kernel
 * sigaction is SIG_DFL with no flags and an empty mask on every ABI. */
void
sr_signals_reset (uint64_t which)
{
  unsigned long ksa[8] = { 0 };
  sigset_t none;

  for (int sig = 1; sig <= 64; sig++)
    if ((which & (UINT64_C (1) << (sig - 1))) && sig != SIGKILL
        && sig != SIGSTOP)
      (void) syscall (SYS_rt_sigaction, sig, ksa, NULL, (size_t) 8);
  sigemptyset (&none);
  (void) sigprocmask (SIG_SETMASK, &none, NULL);
}
