/* Hooks run as real processes: shell scripts and /bin tools in a temp dir. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandrun/error.h"
#include "core/hooks.h"
#include "sandrun/util.h"
#include "unit.h"

static char tmpdir[] = "/tmp/sr-test-hooks-XXXXXX";

static char *
tmp_path (const char *name)
{
  return xasprintf ("%s/%s", tmpdir, name);
}

/* A /bin/sh script named `name` in the temp dir; returns its path. */
static char *
write_script (const char *name, const char *body)
{
  char *path = tmp_path (name);
  _cleanup_free_ char *text = xasprintf ("#!/bin/sh\n%s\n", body);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

  if (fd < 0 || sr_write_all (fd, text, strlen (text)) < 0)
    abort ();
  close (fd);
  return path;
}

static char *
read_tmp (const char *name)
{
  _cleanup_free_ char *path = tmp_path (name);
  char *data = NULL;
  size_t len;
  sr_error *err = NULL;

  if (sr_read_file_at (AT_FDCWD, path, 1 << 24, &data, &len, &err) < 0)
    {
      sr_error_free (err);
      return NULL;
    }
  return data;
}

static oci_hook
hook (const char *path, char **args, char **env, int timeout)
{
  oci_hook h = { .path = (char *) path, .args = args, .env = env };
  if (timeout)
    {
      h.timeout.set = true;
      h.timeout.value = timeout;
    }
  return h;
}

/* Run one hook; returns the error message (malloc'd) or NULL on success. */
static char *
run1 (oci_hook h, const char *kind, const char *state)
{
  oci_hook_list list = { .v = &h, .len = 1 };
  sr_error *err = NULL;
  char *msg;

  if (sr_hooks_run (&list, kind, state, &err) == 0)
    return NULL;
  msg = xstrdup (err->msg);
  sr_error_free (err);
  return msg;
}

/* Run with fd 2 redirected to the temp file `name`. */
static char *
run1_capture_stderr (oci_hook h, const char *name)
{
  _cleanup_free_ char *path = tmp_path (name);
  int saved = dup (2);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  char *msg;

  dup2 (fd, 2);
  close (fd);
  msg = run1 (h, "prestart", "{}");
  dup2 (saved, 2);
  close (saved);
  return msg;
}

static void
test_state_on_stdin (void)
{
  _cleanup_free_ char *script = write_script ("cat", "/bin/cat > \"$1\"");
  _cleanup_free_ char *out = tmp_path ("state.out");
  char *args[] = { script, out, NULL };
  const char *state = "{\"ociVersion\":\"1.0.2\",\"id\":\"x\",\"pid\":1}";
  _cleanup_free_ char *msg = run1 (hook (script, args, NULL, 5),
                                   "createRuntime", state);
  _cleanup_free_ char *got = read_tmp ("state.out");

  CHECK (msg == NULL, "cat hook succeeds (%s)", msg ? msg : "ok");
  CHECK_STR (got, state, "state JSON arrives on stdin");
}

static void
test_env_exact (void)
{
  char *args[] = { "env", NULL };
  char *env[] = { "A=1", "HOOK_B=two words", NULL };
  _cleanup_free_ char *msg = NULL, *got = NULL;

  setenv ("SR_TEST_LEAK", "leaked", 1);
  msg = run1_capture_stderr (hook ("/usr/bin/env", args, env, 5), "env.out");
  got = read_tmp ("env.out");
  CHECK (msg == NULL, "env hook succeeds");
  CHECK_STR (got, "A=1\nHOOK_B=two words\n",
             "env is exactly hook.env, stdout goes to stderr");

  free (msg);
  free (got);
  msg = run1_capture_stderr (hook ("/usr/bin/env", args, NULL, 5), "env0.out");
  got = read_tmp ("env0.out");
  CHECK_STR (got, "", "no env: empty environment");
  unsetenv ("SR_TEST_LEAK");
}

static void
test_args (void)
{
  _cleanup_free_ char *out = tmp_path ("args.out");
  _cleanup_free_ char *cmd = xasprintf ("/bin/cat /proc/$$/cmdline > %s", out);
  char *args[] = { "custom-argv0", "-c", cmd, NULL };
  _cleanup_free_ char *msg = run1 (hook ("/bin/sh", args, NULL, 5),
                                   "prestart", "{}");
  _cleanup_free_ char *got = read_tmp ("args.out");
  _cleanup_free_ char *want = xasprintf ("custom-argv0%c-c%c%s", 0, 0, cmd);

  CHECK (msg == NULL, "args hook succeeds");
  CHECK (got != NULL && memcmp (got, want, strlen (cmd) + 17) == 0,
         "argv is hook.args, args[0] is argv[0]");

  /* No args: argv = [path].  /bin/sh then reads its commands from the
   * state on stdin. */
  _cleanup_free_ char *out2 = tmp_path ("argv0.out");
  _cleanup_free_ char *script = xasprintf ("/bin/cat /proc/$$/cmdline > %s",
                                           out2);
  _cleanup_free_ char *msg2 = run1 (hook ("/bin/sh", NULL, NULL, 5),
                                    "prestart", script);
  _cleanup_free_ char *got2 = read_tmp ("argv0.out");
  CHECK (msg2 == NULL, "no-args hook succeeds");
  CHECK_STR (got2, "/bin/sh",
         "without args argv[0] is the path");
}

static void
test_failures (void)
{
  char *args[] = { "false", NULL };
  _cleanup_free_ char *msg = run1 (hook ("/bin/false", args, NULL, 0),
                                   "prestart", "{}");
  _cleanup_free_ char *killer = write_script ("killer", "kill -9 $$");
  _cleanup_free_ char *msg2 = run1 (hook (killer, NULL, NULL, 0), "poststart",
                                    "{}");
  _cleanup_free_ char *missing = tmp_path ("does-not-exist");
  _cleanup_free_ char *msg3 = run1 (hook (missing, NULL, NULL, 0), "poststop",
                                    "{}");
  _cleanup_free_ char *msg4 = run1 (hook ("bin/true", NULL, NULL, 0),
                                    "prestart", "{}");
  _cleanup_free_ char *want3 = xasprintf (
      "poststop hook \"%s\": exec: No such file or directory", missing);

  CHECK_STR (msg, "prestart hook \"/bin/false\": exited with status 1",
             "non-zero exit");
  CHECK (msg2 != NULL && strstr (msg2, ": killed by signal 9") != NULL,
         "killed by signal (%s)", msg2 ? msg2 : "(null)");
  CHECK_STR (msg3, want3, "exec failure");
  CHECK_STR (msg4, "prestart hook \"bin/true\": path must be absolute",
             "relative path rejected");
}

static void
test_timeout (void)
{
  _cleanup_free_ char *script = write_script ("sleeper",
                                              "echo $$ > \"$1\"\n"
                                              "while :; do /bin/sleep 1; done");
  _cleanup_free_ char *pidfile = tmp_path ("sleeper.pid");
  char *args[] = { script, pidfile, NULL };
  struct timespec t0, t1;
  _cleanup_free_ char *msg = NULL, *want = NULL, *pid = NULL;

  clock_gettime (CLOCK_MONOTONIC, &t0);
  msg = run1 (hook (script, args, NULL, 1), "createRuntime", "{}");
  clock_gettime (CLOCK_MONOTONIC, &t1);
  want = xasprintf ("createRuntime hook \"%s\": timed out after 1s", script);
  CHECK_STR (msg, want, "timeout");
  CHECK (t1.tv_sec - t0.tv_sec < 3, "timeout is honoured promptly");
  pid = read_tmp ("sleeper.pid");
  CHECK (pid != NULL && kill (atoi (pid), 0) < 0 && errno == ESRCH,
         "timed-out hook is killed and reaped");
  CHECK (waitpid (-1, NULL, WNOHANG) < 0 && errno == ECHILD,
         "no child left unreaped");
}

static void
test_no_reader_no_deadlock (void)
{
  size_t big = 4 << 20;
  _cleanup_free_ char *state = xmalloc (big + 1);
  char *args[] = { "true", NULL };
  struct sigaction before, after;
  _cleanup_free_ char *msg = NULL, *msg2 = NULL;
  _cleanup_free_ char *slow = write_script ("slowread",
                                            "/bin/sleep 0.2; exec 0<&-; "
                                            "/bin/sleep 0.2");

  memset (state, 'x', big);
  state[big] = '\0';
  sigaction (SIGPIPE, NULL, &before);
  msg = run1 (hook ("/bin/true", args, NULL, 5), "prestart", state);
  CHECK (msg == NULL, "hook that never reads a 4 MiB state succeeds");
  msg2 = run1 (hook (slow, NULL, NULL, 5), "prestart", state);
  CHECK (msg2 == NULL, "hook closing stdin unread: EPIPE ignored");
  sigaction (SIGPIPE, NULL, &after);
  CHECK (after.sa_handler == before.sa_handler,
         "SIGPIPE disposition restored");
}

static void
test_clean_process_state (void)
{
  _cleanup_free_ char *out = tmp_path ("status.out");
  _cleanup_free_ char *cmd = xasprintf (
      "/bin/grep -E '^Sig(Blk|Ign)' /proc/self/status > %s; "
      "/bin/ls /proc/self/fd >> %s", out, out);
  char *args[] = { "sh", "-c", cmd, NULL };
  sigset_t set, old;
  struct sigaction ign = { .sa_handler = SIG_IGN }, oldterm;
  unsigned long kign[8] = { (unsigned long) SIG_IGN }, kold[2][8];
  int leak = open ("/dev/null", O_RDONLY); /* no O_CLOEXEC on purpose */
  _cleanup_free_ char *msg = NULL, *got = NULL;

  sigemptyset (&set);
  sigaddset (&set, SIGUSR1);
  sigprocmask (SIG_BLOCK, &set, &old);
  sigaction (SIGTERM, &ign, &oldterm);
  /* 32 and 33 too, which glibc's sigaction refuses to touch (make ignores
   * them): the raw syscall. */
  for (int sig = 32; sig <= 33; sig++)
    syscall (SYS_rt_sigaction, sig, kign, kold[sig - 32], (size_t) 8);
  msg = run1 (hook ("/bin/sh", args, NULL, 5), "prestart", "{}");
  for (int sig = 32; sig <= 33; sig++)
    syscall (SYS_rt_sigaction, sig, kold[sig - 32], NULL, (size_t) 8);
  sigprocmask (SIG_SETMASK, &old, NULL);
  sigaction (SIGTERM, &oldterm, NULL);
  close (leak);

  got = read_tmp ("status.out");
  CHECK (msg == NULL, "status hook succeeds");
  CHECK (got != NULL && strstr (got, "SigBlk:\t0000000000000000\n") != NULL,
         "signal mask is reset");
  CHECK (got != NULL && strstr (got, "SigIgn:\t0000000000000000\n") != NULL,
         "ignored signals are reset");
  if (got == NULL || strstr (got, "SigIgn:\t0000000000000000\n") == NULL)
    printf ("#   the hook saw: %s\n", got ? got : "(nothing)");
  /* ls lists 0 1 2 and the fd of its own directory stream. */
  CHECK (got != NULL && strstr (got, "\n0\n1\n2\n3\n") != NULL
             && strstr (got, "\n4\n") == NULL,
         "only fds 0-2 are inherited");
}

static void
test_order_and_warn (void)
{
  _cleanup_free_ char *marker = tmp_path ("marker");
  _cleanup_free_ char *cmd = xasprintf ("echo hi > %s", marker);
  char *touch_args[] = { "sh", "-c", cmd, NULL };
  oci_hook hooks[] = {
    hook ("/bin/true", NULL, NULL, 0),
    hook ("/bin/false", NULL, NULL, 0),
    hook ("/bin/sh", touch_args, NULL, 0),
    hook ("/bin/false", NULL, NULL, 0),
  };
  oci_hook_list list = { .v = hooks, .len = 4 };
  sr_error *err = NULL;
  int saved = dup (2), nul = open ("/dev/null", O_WRONLY);
  int n;

  CHECK (sr_hooks_run (&list, "prestart", "{}", &err) < 0,
         "run stops at the first failure");
  sr_error_free (err);
  CHECK (access (marker, F_OK) < 0, "later hooks do not run");

  dup2 (nul, 2); /* the warnings */
  n = sr_hooks_run_warn (&list, "poststop", "{}");
  dup2 (saved, 2);
  close (saved);
  close (nul);
  CHECK (n == 2, "run_warn counts 2 failures, got %d", n);
  CHECK (access (marker, F_OK) == 0, "run_warn runs them all");
  CHECK (sr_hooks_run (NULL, "prestart", "{}", NULL) == 0, "NULL list");
}

int
main (void)
{
  if (mkdtemp (tmpdir) == NULL)
    return 1;
  test_state_on_stdin ();
  test_env_exact ();
  test_args ();
  test_failures ();
  test_timeout ();
  test_no_reader_no_deadlock ();
  test_clean_process_state ();
  test_order_and_warn ();

  _cleanup_free_ char *rm = xasprintf ("rm -rf '%s'", tmpdir);
  if (system (rm) != 0)
    CHECK (0, "cleanup of %s", tmpdir);
  return unit_finish ();
}
