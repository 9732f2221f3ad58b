/* seccomp_probe: makes raw system calls with chosen numbers and arguments
 * and prints what each returned, so a test can see what a container's
 * seccomp filter did to them.
 *
 *   seccomp_probe [MODE] CALL...
 *     CALL   NR[,ARG...]  up to 6 arguments, C notation (0x.. is hex)
 *     MODE   -i386    call through `int $0x80` (the i386 ABI of x86_64)
 *            -x32     call NR | 0x40000000 (the x32 ABI)
 *            -thread  make each call in a second thread, then report that
 *                     the main thread is still alive
 *            -trap    catch SIGSYS and report it instead of dying
 *
 * One line per call:
 *   NR: ok RET             the call returned RET >= 0
 *   NR: errno E            it failed with errno E
 *   NR: sigsys code=C syscall=S data=D    (-trap) SIGSYS arrived
 *   NR: thread killed      (-thread) the thread died in the call
 * -thread adds "main: alive" once the thread has ended.
 * A call that returns 0 in a new child process (clone, fork) makes the
 * child exit at once. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define X32_SYSCALL_BIT 0x40000000L

enum mode
{
  MODE_NATIVE,
  MODE_I386,
  MODE_X32,
  MODE_THREAD,
  MODE_TRAP,
};

struct call
{
  long nr;
  unsigned long a[6];
  long ret;
  int err;
  int done; /* the call returned (a killed thread never sets it) */
};

static pid_t main_pid;
static volatile sig_atomic_t got_sigsys;
static volatile int sigsys_code, sigsys_syscall, sigsys_data;

static void
usage (void)
{
  fprintf (stderr, "usage: seccomp_probe [-i386|-x32|-thread|-trap] "
                   "NR[,ARG...]...\n");
  exit (2);
}

static unsigned long
parse_number (const char *s)
{
  char *end;
  unsigned long v;

  errno = 0;
  /* strtoul takes "-1" as ULONG_MAX: what a register would hold. */
  v = strtoul (s, &end, 0);
  if (errno != 0 || end == s || (*end != '\0' && *end != ','))
    {
      fprintf (stderr, "seccomp_probe: bad number \"%s\"\n", s);
      exit (2);
    }
  return v;
}

static void
parse_call (const char *spec, struct call *c)
{
  const char *p = spec;
  int n = 0;

  memset (c, 0, sizeof *c);
  c->nr = (long) parse_number (p);
  while ((p = strchr (p, ',')) != NULL)
    {
      if (n == 6)
        usage ();
      c->a[n++] = parse_number (++p);
    }
}

#if defined(__x86_64__)
/* The i386 entry point: eax = nr, ebx, ecx, edx, esi, edi = args (the
 * sixth, in ebp, is left out: no probe needs it).  It clobbers r8-r11 in
 * 64-bit mode. */
static long
int80 (long nr, const unsigned long *a)
{
  long ret;

  __asm__ volatile ("int $0x80"
                    : "=a"(ret)
                    : "a"(nr), "b"(a[0]), "c"(a[1]), "d"(a[2]), "S"(a[3]),
                      "D"(a[4])
                    : "memory", "r8", "r9", "r10", "r11");
  return (int) ret;
}
#else
static long
int80 (long nr, const unsigned long *a)
{
  (void) nr;
  (void) a;
  return -ENOSYS;
}
#endif

static void
do_call (struct call *c, enum mode mode)
{
  if (mode == MODE_I386)
    {
      long r = int80 (c->nr, c->a);
      c->ret = r < 0 && r > -4096 ? -1 : r;
      c->err = c->ret < 0 ? (int) -r : 0;
    }
  else
    {
      long nr = mode == MODE_X32 ? c->nr | X32_SYSCALL_BIT : c->nr;
      errno = 0;
      c->ret = syscall (nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4],
                        c->a[5]);
      c->err = c->ret < 0 ? errno : 0;
    }
  /* A clone or fork that worked: the child has nothing to report. */
  if (c->ret == 0 && getpid () != main_pid)
    _exit (0);
  c->done = 1;
}

static void *
thread_main (void *arg)
{
  do_call (arg, MODE_THREAD);
  return NULL;
}

static void
on_sigsys (int sig, siginfo_t *si, void *uctx)
{
  (void) sig;
  (void) uctx;
  sigsys_code = si->si_code;
  sigsys_syscall = si->si_syscall;
  sigsys_data = si->si_errno;
  got_sigsys = 1;
}

static void
report (const struct call *c)
{
  if (!c->done)
    printf ("%ld: thread killed\n", c->nr);
  else if (got_sigsys)
    printf ("%ld: sigsys code=%d syscall=%d data=%d\n", c->nr, sigsys_code,
            sigsys_syscall, sigsys_data);
  else if (c->ret < 0)
    printf ("%ld: errno %d\n", c->nr, c->err);
  else
    printf ("%ld: ok %ld\n", c->nr, c->ret);
  fflush (stdout);
}

static enum mode
parse_mode (const char *arg)
{
  if (strcmp (arg, "-i386") == 0)
    return MODE_I386;
  if (strcmp (arg, "-x32") == 0)
    return MODE_X32;
  if (strcmp (arg, "-thread") == 0)
    return MODE_THREAD;
  if (strcmp (arg, "-trap") == 0)
    return MODE_TRAP;
  usage ();
  return MODE_NATIVE;
}

int
main (int argc, char **argv)
{
  enum mode mode = MODE_NATIVE;
  int i = 1;

  main_pid = getpid ();
  if (argc > 1 && argv[1][0] == '-' && argv[1][1] != '\0'
      && (argv[1][1] < '0' || argv[1][1] > '9'))
    mode = parse_mode (argv[i++]);
  if (i >= argc)
    usage ();
  if (mode == MODE_TRAP)
    {
      struct sigaction sa;
      memset (&sa, 0, sizeof sa);
      sa.sa_sigaction = on_sigsys;
      sa.sa_flags = SA_SIGINFO;
      sigaction (SIGSYS, &sa, NULL);
    }

  for (; i < argc; i++)
    {
      struct call c;

      parse_call (argv[i], &c);
      got_sigsys = 0;
      if (mode == MODE_THREAD)
        {
          pthread_t t;
          if (pthread_create (&t, NULL, thread_main, &c) != 0)
            {
              perror ("pthread_create");
              return 1;
            }
          /* A thread killed by seccomp still clears its tid: join works. */
          pthread_join (t, NULL);
        }
      else
        do_call (&c, mode);
      report (&c);
    }
  if (mode == MODE_THREAD)
    printf ("main: alive\n");
  /* Reap children a successful clone or fork left. */
  while (waitpid (-1, NULL, __WALL) > 0)
    ;
  return 0;
}
