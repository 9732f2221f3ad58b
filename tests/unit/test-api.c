/* Tests of the core's API for callers that stay alive (the sandbox layer):
 * waits with a deadline on a pidfd, and, when SR_TEST_ROOTFS names a root
 * filesystem with /bin/sh (tests/integration/api.bats sets it, as root),
 * containers created from an in-memory config with the caller's stdio,
 * several in one process, with their stats and the list. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci-spec/oci-spec.h"
#include "sandrun/container.h"
#include "sandrun/stats.h"
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

/* The number of open fds of this process, to see that nothing leaks. */
static int
count_fds (void)
{
  int n = 0;
  _cleanup_closedir_ DIR *d = opendir ("/proc/self/fd");
  for (struct dirent *de; d && (de = readdir (d)) != NULL;)
    n += de->d_name[0] != '.';
  return n;
}

/* `sh -c script` as a config built in memory: spec's default without a
 * root (the rootfs comes from the create options) and without terminal. */
static oci_config *
config_for (const char *script)
{
  _cleanup_free_ char *spec = sr_spec_default (false, 0, 0);
  sr_error *err = NULL;
  oci_config *c = oci_config_parse_data (spec, strlen (spec), &err);
  if (c == NULL)
    abort ();
  free (c->root->path);
  free (c->root);
  c->root = NULL;
  c->process->terminal = false;
  strv_free (c->process->args);
  c->process->args = xcalloc (4, sizeof (char *));
  c->process->args[0] = xstrdup ("sh");
  c->process->args[1] = xstrdup ("-c");
  c->process->args[2] = xstrdup (script);
  /* api.bats's mark, by which it finds processes left behind. */
  const char *mark = getenv ("SR_TEST_ENV");
  if (mark != NULL)
    strv_append (&c->process->env, mark);
  return c;
}

/* Limits for the stats test: 8 pids, 64 MiB of memory. */
static void
limit (oci_config *c)
{
  oci_resources *r = c->linux_->resources;
  if (r == NULL)
    r = c->linux_->resources = xcalloc (1, sizeof *r);
  r->pids = xcalloc (1, sizeof *r->pids);
  r->pids->limit = (oci_opt_i64){ .set = true, .value = 8 };
  r->memory = xcalloc (1, sizeof *r->memory);
  r->memory->limit = (oci_opt_i64){ .set = true, .value = 64 << 20 };
}

/* Container ids: SR_TEST_ID-N (api.bats checks them for leftovers). */
static const char *
id_prefix (void)
{
  static char fallback[32];
  const char *p = getenv ("SR_TEST_ID");
  if (p != NULL)
    return p;
  snprintf (fallback, sizeof fallback, "api-%d", (int) getpid ());
  return fallback;
}

/* Everything one pipe holds once its writers are gone. */
static char *
drain (int fd)
{
  char buf[4096];
  size_t n = 0;
  ssize_t r;
  while (n < sizeof buf - 1
         && (r = read (fd, buf + n, sizeof buf - 1 - n)) > 0)
    n += (size_t) r;
  buf[n] = '\0';
  return xstrdup (buf);
}

/* Create (start_now: and start in one go; else create, then start) the
 * container `id` running `script` with pipes as stdout and stderr. */
static int
create_piped (const struct sr_globals *g, const char *id, const char *script,
              bool start_now, int out[2], int errp[2], pid_t *pid, int *pidfd)
{
  oci_config *cfg = config_for (script);
  if (strstr (id, "-s") != NULL)
    limit (cfg);
  sr_error *err = NULL;
  if (pipe2 (out, O_CLOEXEC) < 0 || pipe2 (errp, O_CLOEXEC) < 0)
    abort ();
  _cleanup_close_ int null = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  struct sr_create_opts opts = {
    .config = cfg,
    .rootfs = getenv ("SR_TEST_ROOTFS"),
    .stdio = { null, out[1], errp[1] },
    .set_stdio = true,
    .start_now = start_now,
    .detach = true,
    .init_pid = pid,
    .init_pidfd = pidfd,
  };
  int r = sr_container_create (g, id, &opts, NULL, &err);
  CHECK (r == 0, "create %s from memory%s%s", id, err ? ": " : "",
         err ? err->msg : "");
  sr_error_free (err);
  err = NULL;
  close (out[1]);
  close (errp[1]);
  oci_config_free (cfg);
  if (r == 0 && !start_now)
    {
      r = sr_container_start (g, id, &err);
      CHECK (r == 0, "start %s%s%s", id, err ? ": " : "", err ? err->msg : "");
      sr_error_free (err);
    }
  return r;
}

/* Two containers, one after the other, in this one process. */
static void
test_create_from_memory (const struct sr_globals *g)
{
  int fds_before = count_fds ();
  for (int i = 0; i < 2; i++)
    {
      _cleanup_free_ char *id = xasprintf ("%s-%d", id_prefix (), i);
      int out[2], errp[2], status = -1, pidfd = -1;
      pid_t pid = 0;
      sr_error *err = NULL;
      if (create_piped (g, id, "echo out; echo err >&2; exit 7", i == 0, out,
                        errp, &pid, &pidfd)
          < 0)
        {
          close (out[0]);
          close (errp[0]);
          continue;
        }
      CHECK (pid > 0 && pidfd >= 0, "%s: the init's pid and pidfd", id);
      CHECK (sr_wait_pidfd (pidfd, 20000, &status, &err) == 0 && status == 7,
             "%s: the process's exit status, 7 (%d)", id, status);
      sr_error_free (err);
      err = NULL;
      _cleanup_free_ char *o = drain (out[0]);
      _cleanup_free_ char *e = drain (errp[0]);
      CHECK_STR (o, "out\n", "%s: stdout went to the caller's pipe", id);
      CHECK_STR (e, "err\n", "%s: stderr went to the caller's pipe", id);
      close (out[0]);
      close (errp[0]);
      close (pidfd);
      CHECK (sr_container_delete (g, id, false, &err) == 0, "%s: delete%s%s",
             id, err ? ": " : "", err ? err->msg : "");
      sr_error_free (err);
    }
  CHECK (count_fds () == fds_before, "no fd left open in the caller");
}

/* A deadline that passes: the caller kills it and waits again. */
static void
test_timeout (const struct sr_globals *g)
{
  _cleanup_free_ char *id = xasprintf ("%s-t", id_prefix ());
  int out[2], errp[2], status = -1, pidfd = -1;
  pid_t pid = 0;
  sr_error *err = NULL;
  if (create_piped (g, id, "exec sleep 1000", true, out, errp, &pid, &pidfd)
      < 0)
    return;
  CHECK (sr_wait_pidfd (pidfd, 100, &status, &err) < 0 && err
             && err->errnum == ETIMEDOUT,
         "a sleeping container times out");
  sr_error_free (err);
  err = NULL;
  CHECK (sr_container_kill (g, id, SIGKILL, false, &err) == 0, "kill it");
  sr_error_free (err);
  err = NULL;
  CHECK (sr_wait_pidfd (pidfd, 20000, &status, &err) == 0 && status == 137,
         "killed: 137 (%d)", status);
  sr_error_free (err);
  err = NULL;
  close (out[0]);
  close (errp[0]);
  close (pidfd);
  CHECK (sr_container_delete (g, id, false, &err) == 0, "delete %s", id);
  sr_error_free (err);
}

/* sr_container_list shows the running container `id` with its init. */
static void
check_listed (const struct sr_globals *g, const char *id, pid_t pid)
{
  struct sr_container_info *v = NULL;
  size_t n = 0, found = 0;
  sr_error *err = NULL;
  CHECK (sr_container_list (g, &v, &n, &err) == 0, "list");
  sr_error_free (err);
  for (size_t i = 0; i < n; i++)
    if (strcmp (v[i].id, id) == 0 && v[i].pid == pid
        && v[i].status == SR_STATUS_RUNNING && v[i].created != NULL
        && v[i].owner != NULL && v[i].rootfs != NULL
        && strcmp (v[i].rootfs, getenv ("SR_TEST_ROOTFS")) == 0)
      found++;
  CHECK (found == 1, "list: %s running, pid %d, its rootfs", id, (int) pid);
  sr_container_list_free (v, n);
}

/* A container that hits its pids limit, then waits: its figures, read
 * from its real cgroup while it runs. */
static void
test_stats (const struct sr_globals *g)
{
  _cleanup_free_ char *id = xasprintf ("%s-s", id_prefix ());
  int out[2], errp[2], status = -1, pidfd = -1;
  pid_t pid = 0;
  sr_error *err = NULL;
  /* Ten sleepers against a limit of 8, from a subshell, which dies at the
   * first fork refused.  Then a line says the forks are done, and the
   * container waits to be read. */
  const char *script = "(for i in 1 2 3 4 5 6 7 8 9 10; do sleep 1000 & done)"
                       " 2>/dev/null; echo forked; exec sleep 1000";
  if (create_piped (g, id, script, true, out, errp, &pid, &pidfd) < 0)
    return;
  char line[16] = "";
  ssize_t n = read (out[0], line, sizeof line - 1);
  CHECK (n > 0 && strncmp (line, "forked", 6) == 0, "%s: forks done", id);
  struct sr_stats st;
  int r = sr_container_stats (g, id, &st, &err);
  CHECK (r == 0, "%s: stats%s%s", id, err ? ": " : "", err ? err->msg : "");
  sr_error_free (err);
  err = NULL;
  if (r == 0)
    {
      CHECK (st.pids_limit == 8 && st.pids_current >= 2
                 && st.pids_current <= 8,
             "pids: limit 8, some running (%llu, %llu)",
             (unsigned long long) st.pids_limit,
             (unsigned long long) st.pids_current);
      CHECK (st.pids_max_events >= 1, "pids: refused forks counted (%llu)",
             (unsigned long long) st.pids_max_events);
      CHECK (st.memory_limit_bytes == 64 << 20 && st.memory_bytes > 0
                 && st.memory_peak_bytes >= st.memory_bytes,
             "memory: limit 64 MiB, usage %llu, peak %llu",
             (unsigned long long) st.memory_bytes,
             (unsigned long long) st.memory_peak_bytes);
      CHECK (st.cpu_usec > 0 && st.cpu_usec >= st.cpu_user_usec,
             "cpu: %llu usec in all", (unsigned long long) st.cpu_usec);
    }
  check_listed (g, id, pid);
  sr_container_kill (g, id, SIGKILL, true, NULL);
  CHECK (sr_wait_pidfd (pidfd, 20000, &status, &err) == 0 && status == 137,
         "%s: killed", id);
  sr_error_free (err);
  err = NULL;
  /* Until it is deleted, a stopped container's cgroup still holds its final
   * figures, which a supervisor reads for its report. */
  CHECK (sr_container_stats (g, id, &st, &err) == 0 && st.pids_current == 0
             && st.memory_peak_bytes > 0 && st.cpu_usec > 0,
         "a stopped container's final stats: %s", err ? err->msg : "");
  sr_error_free (err);
  err = NULL;
  close (out[0]);
  close (errp[0]);
  close (pidfd);
  sr_container_delete (g, id, true, NULL);
  CHECK (sr_container_stats (g, id, &st, &err) < 0 && err != NULL,
         "a deleted container has no stats");
  sr_error_free (err);
}

int
main (void)
{
  test_wait ();
  struct sr_globals none = { .root = "/nonexistent/sandrun-test-root" };
  struct sr_container_info *v = (void *) 1;
  size_t n = 1;
  CHECK (sr_container_list (&none, &v, &n, NULL) == 0 && v == NULL && n == 0,
         "list without a root directory: nothing");
  const char *rootfs = getenv ("SR_TEST_ROOTFS");
  const char *root = getenv ("SR_TEST_ROOT");
  if (rootfs == NULL || root == NULL || geteuid () != 0)
    printf ("# skipping the container tests: run as root with SR_TEST_ROOTFS"
            " and SR_TEST_ROOT (tests/integration/api.bats does)\n");
  else
    {
      struct sr_globals g = { .root = root };
      test_create_from_memory (&g);
      test_timeout (&g);
      test_stats (&g);
    }
  return unit_finish ();
}
