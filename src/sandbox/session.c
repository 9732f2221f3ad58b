/* Sessions: their state directory, start (the supervisor), open, stop,
 * list and reclaim (see session.h). */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "oci-spec/oci-spec.h"
#include "kernel_py.h"
#include "policy.h"
#include "sandbox.h"
#include "egress.h"
#include "session.h"
#include "session_spawn.h"
#include "watchdog.h"
#include "sandrun/jsongen.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

#define INFO_FILE "info"
#define USED_FILE "used"
#define LOCK_FILE "lock"
#define INFO_MAX (1 << 20)
#define STOP_WAIT_MS 10000
/* An idle timeout reached while an execution runs: checked again after. */
#define BUSY_RECHECK_MS 250

/* The session's init: reaps what the executions leave, and is nothing a
 * rootfs lacks but /bin/sh and sleep. */
static const char *const init_argv[]
    = { "/bin/sh", "-c",
        "trap 'exit 0' TERM; while :; do sleep 3600 & wait; done", NULL };

void
sb_session_opts_clear (struct sb_session_opts *so)
{
  free (so->name);
  free (so->kernel);
  strv_free (so->flags);
  memset (so, 0, sizeof *so);
}

bool
sb_session_name_ok (const char *name)
{
  size_t n = strlen (name);
  if (n == 0 || n > 64 || name[0] == '.')
    return false;
  return strspn (name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01"
                       "23456789_.-")
         == n;
}

static char *
sessions_dir (const struct sr_globals *g)
{
  return xasprintf ("%s/" SB_STATE_DIR "/" SB_SESSIONS_DIR, g->root);
}

/* ---- the info file: NUL-separated KEY=VALUE ------------------------------- */

static void
put (char **buf, size_t *len, const char *key, const char *value)
{
  _cleanup_free_ char *e
      = xasprintf ("%s=%s", key, value != NULL ? value : "");
  size_t n = strlen (e) + 1;
  *buf = xrealloc (*buf, *len + n);
  memcpy (*buf + *len, e, n);
  *len += n;
}

static void
put_num (char **buf, size_t *len, const char *key, long long v)
{
  char n[32];
  snprintf (n, sizeof n, "%lld", v);
  put (buf, len, key, n);
}

static int
write_info (const char *dir, const struct sb_session_opts *so,
            const struct sb_bundle *b, const struct sb_egress *eg,
            sr_error **err)
{
  _cleanup_free_ char *buf = NULL;
  _cleanup_free_ char *now = sr_now_rfc3339 ();
  size_t len = 0;

  put (&buf, &len, "id", b->id);
  put_num (&buf, &len, "pid", getpid ());
  put (&buf, &len, "created", now);
  put_num (&buf, &len, "idle_ms", so->idle_ms);
  put_num (&buf, &len, "lifetime_ms", so->lifetime_ms);
  put (&buf, &len, "kernel", so->kernel);
  put (&buf, &len, "work", b->work);
  put (&buf, &len, "tmp", b->tmp);
  put_num (&buf, &len, "ephemeral", b->ephemeral_work);
  put_num (&buf, &len, "direct", b->work_direct);
  put_num (&buf, &len, "work_uid", b->work_uid);
  put_num (&buf, &len, "work_gid", b->work_gid);
  put_num (&buf, &len, "host_base", b->host_base);
  if (eg->pid > 0)
    {
      put_num (&buf, &len, "egress_control_fd", eg->control_fd);
      put_num (&buf, &len, "egress_log_fd", eg->log_fd);
    }
  for (size_t i = 0; b->host_paths != NULL && b->host_paths[i] != NULL; i++)
    put (&buf, &len, "host_path", b->host_paths[i]);
  for (size_t i = 0; so->flags != NULL && so->flags[i] != NULL; i++)
    put (&buf, &len, "flag", so->flags[i]);

  _cleanup_free_ char *tmp = xasprintf ("%s/" INFO_FILE ".new", dir);
  _cleanup_free_ char *path = xasprintf ("%s/" INFO_FILE, dir);
  _cleanup_close_ int fd = open (
      tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 || sr_write_all (fd, buf, len) < 0 || rename (tmp, path) < 0)
    return sr_fail (err, errno, "write \"%s\"", path);
  return 0;
}

static long long
num (const char *v)
{
  return strtoll (v, NULL, 10);
}

static void
parse_info (struct sb_session *s, const char *buf, size_t len)
{
  struct sb_bundle *b = &s->b;
  for (const char *p = buf; p < buf + len; p += strlen (p) + 1)
    {
      const char *eq = strchr (p, '=');
      if (eq == NULL)
        continue;
      _cleanup_free_ char *k = strndup (p, (size_t) (eq - p));
      const char *v = eq + 1;
      if (str_eq (k, "id"))
        b->id = xstrdup (v);
      else if (str_eq (k, "pid"))
        s->pid = (pid_t) num (v);
      else if (str_eq (k, "created"))
        s->created = xstrdup (v);
      else if (str_eq (k, "idle_ms"))
        s->idle_ms = num (v);
      else if (str_eq (k, "lifetime_ms"))
        s->lifetime_ms = num (v);
      else if (str_eq (k, "kernel") && *v != '\0')
        s->kernel = xstrdup (v);
      else if (str_eq (k, "work"))
        b->work = xstrdup (v);
      else if (str_eq (k, "tmp"))
        b->tmp = xstrdup (v);
      else if (str_eq (k, "ephemeral"))
        b->ephemeral_work = num (v) != 0;
      else if (str_eq (k, "direct"))
        b->work_direct = num (v) != 0;
      else if (str_eq (k, "work_uid"))
        b->work_uid = (uid_t) num (v);
      else if (str_eq (k, "work_gid"))
        b->work_gid = (gid_t) num (v);
      else if (str_eq (k, "host_base"))
        b->host_base = (uid_t) num (v);
      else if (str_eq (k, "egress_control_fd"))
        s->egress_control_fd = (int) num (v);
      else if (str_eq (k, "egress_log_fd"))
        s->egress_log_fd = (int) num (v);
      else if (str_eq (k, "host_path"))
        strv_append (&b->host_paths, v);
      else if (str_eq (k, "flag"))
        strv_append (&s->flags, v);
    }
}

/* ---- finding a session ----------------------------------------------------- */

/* The lock is held: by the supervisor, alive. */
static bool
lock_held (const char *dir)
{
  _cleanup_free_ char *lock = xasprintf ("%s/" LOCK_FILE, dir);
  _cleanup_close_ int fd = open (lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return false;
  if (flock (fd, LOCK_EX | LOCK_NB) == 0)
    return false;
  return errno == EWOULDBLOCK;
}

void
sb_session_close (struct sb_session *s)
{
  free (s->name);
  free (s->dir);
  sr_close (s->pidfd);
  strv_free (s->flags);
  free (s->kernel);
  free (s->created);
  struct sb_bundle *b = &s->b;
  free (b->id);
  free (b->work);
  free (b->tmp);
  strv_free (b->host_paths);
  memset (s, 0, sizeof *s);
  s->pidfd = -1;
  s->egress_control_fd = s->egress_log_fd = -1;
  s->b.lock_fd = s->b.slot_fd = -1;
}

int
sb_session_open (const struct sr_globals *g, const char *name,
                 struct sb_session *s, sr_error **err)
{
  _cleanup_free_ char *sdir = sessions_dir (g);
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;

  memset (s, 0, sizeof *s);
  s->pidfd = -1;
  s->egress_control_fd = s->egress_log_fd = -1;
  s->b.lock_fd = s->b.slot_fd = -1;
  if (!sb_session_name_ok (name))
    return sr_fail (err, EINVAL,
                    "\"%s\" is not a session name (letters, digits, _ . -)",
                    name);
  sb_session_reclaim (g);
  s->name = xstrdup (name);
  s->dir = xasprintf ("%s/%s", sdir, name);
  _cleanup_free_ char *info = xasprintf ("%s/" INFO_FILE, s->dir);
  if (!lock_held (s->dir)
      || sr_read_file_at (AT_FDCWD, info, INFO_MAX, &buf, &len, err) < 0)
    {
      sr_error_free (*err);
      *err = NULL;
      return sr_fail (err, 0, "no session \"%s\"", name);
    }
  parse_info (s, buf, len);
  s->pidfd = (int) syscall (SYS_pidfd_open, s->pid, 0);
  /* The pidfd is the supervisor's if the lock is still held now. */
  if (s->pidfd < 0 || s->b.id == NULL || !lock_held (s->dir))
    return sr_fail (err, 0, "no session \"%s\"", name);
  return 0;
}

int
sb_session_enter (const struct sb_session *s, sr_error **err)
{
  _cleanup_free_ char *path = xasprintf ("/proc/%d/ns/mnt", (int) s->pid);
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || syscall (SYS_pidfd_send_signal, s->pidfd, 0, NULL, 0) < 0)
    return sr_fail (err, ESRCH, "session \"%s\": its supervisor is gone",
                    s->name);
  /* setns resets the cwd: relative paths keep meaning the caller's. */
  _cleanup_close_ int cwd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (setns (fd, CLONE_NEWNS) < 0)
    return sr_fail (err, errno, "session \"%s\": join its mount namespace",
                    s->name);
  if (cwd >= 0 && fchdir (cwd) < 0)
    return sr_fail (err, errno,
                    "session \"%s\": back to the working directory", s->name);
  return 0;
}

void
sb_session_touch (const struct sb_session *s)
{
  _cleanup_free_ char *used = xasprintf ("%s/" USED_FILE, s->dir);
  _cleanup_close_ int fd
      = open (used, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0)
    futimens (fd, NULL);
}

/* ---- the supervisor -------------------------------------------------------- */

struct supervisor
{
  const struct sr_globals *g;
  const struct sb_options *o;
  const struct sb_session_opts *so;
  const char *dir;
  struct sb_bundle b;
  oci_config *cfg;
  struct sb_watchdog wd;
  struct sb_egress eg; /* --allow-host: the gateway, for the session */
  pid_t init;
  int init_pidfd;
  int listen_fd;          /* executions ask here (session_spawn.h) */
  sr_exec_prepared *exec; /* their exec, loaded once */
  int64_t started_ms;
};

static int64_t
mtime_ms (const char *path)
{
  struct stat st;
  struct timespec now;
  if (stat (path, &st) < 0)
    return -1;
  clock_gettime (CLOCK_REALTIME, &now);
  /* How long ago, on the monotonic clock. */
  int64_t ago = (now.tv_sec - st.st_mtim.tv_sec) * 1000
                + (now.tv_nsec - st.st_mtim.tv_nsec) / 1000000;
  return sr_monotonic_ms () - (ago > 0 ? ago : 0);
}

/* The next moment the session must end at, -1 for none. */
static int64_t
next_deadline (struct supervisor *v)
{
  int64_t d = -1;
  if (v->so->lifetime_ms > 0)
    d = v->started_ms + v->so->lifetime_ms;
  if (v->so->idle_ms > 0)
    {
      _cleanup_free_ char *used = xasprintf ("%s/" USED_FILE, v->dir);
      int64_t last = mtime_ms (used);
      if (last < v->started_ms)
        last = v->started_ms;
      int64_t idle = last + v->so->idle_ms;
      if (d < 0 || idle < d)
        d = idle;
    }
  return d;
}

/* An execution holds the busy lock shared: the session is not idle then. */
static bool
busy (const char *dir)
{
  _cleanup_free_ char *p = xasprintf ("%s/busy", dir);
  _cleanup_close_ int fd
      = open (p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return false;
  if (flock (fd, LOCK_EX | LOCK_NB) < 0)
    return true;
  flock (fd, LOCK_UN);
  return false;
}

static void
live (struct supervisor *v)
{
  sigset_t set, old;
  sb_supervisor_block_signals (&set, &old);
  sigaddset (&set, SIGCHLD);
  sigprocmask (SIG_BLOCK, &set, NULL);
  _cleanup_close_ int sigfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  int64_t busy_until = -1; /* idle but busy: look again then */

  for (;;)
    {
      struct pollfd p[3] = { { .fd = v->init_pidfd, .events = POLLIN },
                             { .fd = sigfd, .events = POLLIN },
                             { .fd = v->listen_fd, .events = POLLIN } };
      int64_t d = next_deadline (v), now = sr_monotonic_ms ();
      if (d >= 0 && busy_until > d)
        d = busy_until;
      int wait = d < 0 ? -1 : d > now ? (int) (d - now) : 0;
      poll (p, 3, wait > 60000 ? 60000 : wait);
      if (p[0].revents)
        return; /* the init died: the session is over */
      if (p[2].revents)
        sb_spawn_accept (v->g, v->b.id, v->listen_fd, &v->exec);
      if (p[1].revents)
        {
          struct signalfd_siginfo si;
          while (read (sigfd, &si, sizeof si) == sizeof si)
            if (si.ssi_signo != SIGCHLD)
              return;
          pid_t pid;
          while ((pid = waitpid (-1, NULL, WNOHANG)) > 0)
            if (pid == v->eg.pid)
              v->eg.pid = -1; /* gone: never signalled by that pid again */
        }
      now = sr_monotonic_ms ();
      d = next_deadline (v);
      if (d >= 0 && now >= d)
        {
          if (v->so->lifetime_ms > 0
              && now >= v->started_ms + v->so->lifetime_ms)
            return;
          if (!busy (v->dir))
            return;
          busy_until = now + BUSY_RECHECK_MS;
        }
    }
}

static void
remove_session_dir (const char *dir)
{
  static const char *const files[]
      = { INFO_FILE,        INFO_FILE ".new", USED_FILE, "busy",
          "kernel-started", SB_SPAWN_SOCKET,  LOCK_FILE };
  for (size_t i = 0; i < ARRAY_SIZE (files); i++)
    {
      _cleanup_free_ char *p = xasprintf ("%s/%s", dir, files[i]);
      unlink (p);
    }
  rmdir (dir);
}

static void
end (struct supervisor *v)
{
  sr_exec_prepared_free (v->exec);
  v->exec = NULL;
  if (v->init_pidfd >= 0)
    {
      struct pollfd p = { .fd = v->init_pidfd, .events = POLLIN };
      syscall (SYS_pidfd_send_signal, v->init_pidfd, SIGKILL, NULL, 0);
      poll (&p, 1, 5000);
      waitpid (v->init, NULL, 0);
      _cleanup_error_ sr_error *err = NULL;
      if (sr_container_delete (v->g, v->b.id, true, &err) < 0)
        sr_log (SR_LOG_WARNING, "session: delete \"%s\": %s", v->b.id,
                err->msg);
    }
  /* the gateway after the container: the sandbox's namespace is its */
  sb_egress_end (&v->eg);
  sb_egress_clear (&v->eg);
  sb_bundle_destroy (&v->b);
  sb_watchdog_stop (&v->wd);
  if (v->cfg != NULL)
    oci_config_free (v->cfg);
}

/* Put the kernel's driver at /tmp/.sandrun-kernel/driver.py, root's and
 * read-only to the sandbox. */
static int
install_kernel (const struct sb_bundle *b, sr_error **err)
{
  _cleanup_free_ char *dir = xasprintf ("%s/.sandrun-kernel", b->tmp);
  _cleanup_free_ char *path = xasprintf ("%s/driver.py", dir);
  if (mkdir (dir, 0755) < 0)
    return sr_fail (err, errno, "mkdir \"%s\"", dir);
  _cleanup_close_ int fd = open (
      path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0 || sr_write_all (fd, sb_kernel_py, strlen (sb_kernel_py)) < 0)
    return sr_fail (err, errno, "write \"%s\"", path);
  return 0;
}

static int
make_sandbox (struct supervisor *v, sr_error **err)
{
  struct sb_options o = *v->o;
  _cleanup_close_ int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  int stdio[3] = { null, null, null };

  o.argv = (char **) init_argv;
  if (sb_bundle_create (v->g, &o, &v->b, err) < 0)
    return -1;
  if (v->so->kernel != NULL && install_kernel (&v->b, err) < 0)
    return -1;
  /* as the one-shot's, but for the session's lifetime: its executions
   * take their share of its record (session_egress.h) */
  if (sb_egress_wanted (&o)
      && sb_egress_start_for (&o, &v->b, &v->eg, err) < 0)
    return -1;
  v->cfg = sb_policy_config (&o, &v->b, err);
  if (v->cfg == NULL)
    return -1;
  if (prctl (PR_SET_CHILD_SUBREAPER, 1) < 0)
    return sr_fail (err, errno, "become a subreaper");
  if (sb_watchdog_start (v->g, &v->b, &v->wd, err) < 0)
    return -1;
  if (sb_container_create (v->g, &o, &v->b, &v->cfg, stdio, &v->init,
                           &v->init_pidfd, err)
      < 0)
    return -1;
  sb_watchdog_arm (&v->wd, v->init);
  return write_info (v->dir, v->so, &v->b, &v->eg, err);
}

static __attribute__ ((noreturn)) void
supervise (const struct sr_globals *g, const struct sb_options *o,
           const struct sb_session_opts *so, const char *dir, int lock_fd,
           int report)
{
  struct supervisor v = { .g = g,
                          .o = o,
                          .so = so,
                          .dir = dir,
                          .b = SB_BUNDLE_INIT,
                          .wd = SB_WATCHDOG_INIT,
                          .eg = SB_EGRESS_INIT,
                          .init = -1,
                          .init_pidfd = -1,
                          .listen_fd = -1 };
  _cleanup_error_ sr_error *err = NULL;
  int keep[] = { lock_fd, report };

  setsid ();
  sr_close_fds_except (3, keep, ARRAY_SIZE (keep));
  int null = open ("/dev/null", O_RDWR);
  dup2 (null, 0);
  dup2 (null, 1);
  if (!g->debug)
    dup2 (null, 2);
  v.started_ms = sr_monotonic_ms ();
  v.listen_fd = sb_spawn_listen (dir, &err);
  if (v.listen_fd < 0 || make_sandbox (&v, &err) < 0)
    {
      /* undone before the caller hears of it: a failed start has left
       * nothing by the time it returns */
      end (&v);
      remove_session_dir (dir);
      sr_write_all (report, err->msg, strlen (err->msg));
      _exit (1);
    }
  sr_write_all (report, "", 1);
  close (report);
  /* Pin no directory of the caller's for the session's lifetime. */
  if (chdir ("/") < 0)
    sr_log (SR_LOG_DEBUG, "session: chdir /: %m");
  live (&v);
  end (&v);
  remove_session_dir (dir);
  _exit (0);
}

/* The session's directory, made with its lock held (under another name,
 * then renamed, as the bundles are). */
static int
make_session_dir (const struct sr_globals *g, const char *name, char **dir,
                  int *lock_fd, sr_error **err)
{
  _cleanup_free_ char *sbdir = xasprintf ("%s/" SB_STATE_DIR, g->root);
  _cleanup_free_ char *sdir = sessions_dir (g);
  if ((mkdir (g->root, 0711) < 0 && errno != EEXIST)
      || (mkdir (sbdir, 0711) < 0 && errno != EEXIST)
      || (mkdir (sdir, 0700) < 0 && errno != EEXIST))
    return sr_fail (err, errno, "mkdir \"%s\"", sdir);
  _cleanup_free_ char *tmp = xasprintf ("%s/.new-%s", sdir, name);
  _cleanup_free_ char *lock = xasprintf ("%s/" LOCK_FILE, tmp);
  if (mkdir (tmp, 0700) < 0)
    return sr_fail (err, errno, "mkdir \"%s\"", tmp);
  *lock_fd = open (lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (*lock_fd < 0 || flock (*lock_fd, LOCK_EX) < 0)
    {
      int e = errno;
      remove_session_dir (tmp);
      return sr_fail (err, e, "lock \"%s\"", lock);
    }
  *dir = xasprintf ("%s/%s", sdir, name);
  if (renameat2 (AT_FDCWD, tmp, AT_FDCWD, *dir, RENAME_NOREPLACE) < 0)
    {
      int e = errno;
      remove_session_dir (tmp);
      if (e == EEXIST || e == ENOTEMPTY)
        return sr_fail (err, EEXIST, "a session named \"%s\" exists already",
                        name);
      return sr_fail (err, e, "rename to \"%s\"", *dir);
    }
  return 0;
}

static int
start_supervisor (const struct sr_globals *g, const struct sb_options *o,
                  const struct sb_session_opts *so, sr_error **err)
{
  _cleanup_free_ char *dir = NULL;
  _cleanup_close_ int lock_fd = -1;
  int p[2];

  if (!sb_session_name_ok (so->name))
    return sr_fail (err, 0,
                    "--name \"%s\": expected 1 to 64 letters, digits, _ . -",
                    so->name);
  sb_session_reclaim (g);
  if (make_session_dir (g, so->name, &dir, &lock_fd, err) < 0)
    return -1;
  if (pipe2 (p, O_CLOEXEC) < 0)
    {
      remove_session_dir (dir);
      return sr_fail (err, errno, "pipe");
    }
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (p[0]);
      if (fork () == 0)
        supervise (g, o, so, dir, lock_fd, p[1]);
      _exit (0);
    }
  close (p[1]);
  if (pid > 0)
    waitpid (pid, NULL, 0);
  /* The supervisor has the lock now (inherited): ours goes. */
  sr_close (lock_fd);
  lock_fd = -1;
  char msg[4096];
  ssize_t n = pid < 0 ? -1 : read (p[0], msg, sizeof msg - 1);
  close (p[0]);
  if (n == 1 && msg[0] == '\0')
    return 0;
  if (n <= 0)
    {
      remove_session_dir (dir);
      return sr_fail (
          err, EIO, "session \"%s\": its supervisor ended before it was ready",
          so->name);
    }
  msg[n] = '\0';
  return sr_fail (err, 0, "%s", msg);
}

/* A session whose init or interpreter cannot run is stopped at once, with
 * the reason, rather than left to fail every execution. */
static int
probe (const struct sr_globals *g, const struct sb_options *start,
       const struct sb_session_opts *so, sr_error **err)
{
  struct sb_session s;
  struct sb_options o = *start;
  char *argv[] = { "python3", "-c", "", NULL };
  int status = 0, r;

  o.argv = argv;
  o.quiet = true;
  o.receipt = o.audit_log = o.stdin_file = NULL;
  o.timeout_ms = 60000;
  r = sb_session_open (g, so->name, &s, err);
  if (r < 0)
    {
      sr_error_free (*err);
      *err = NULL;
      r = sr_fail (err, ENOEXEC,
                   "the session's init (/bin/sh and sleep) could not run "
                   "in its root file system");
    }
  else if (so->kernel != NULL
           && (sb_session_enter (&s, err) < 0
               || sb_session_exec (g, &s, &o, "", &status, err) < 0
               || (status != 0
                   && sr_fail (
                          err, ENOEXEC,
                          "--kernel python: the interpreter did not "
                          "start in the sandbox (is python3 in its root?)")
                          < 0)))
    r = -1;
  sb_session_close (&s);
  return r;
}

int
sb_session_start (const struct sr_globals *g, const struct sb_options *o,
                  const struct sb_session_opts *so, sr_error **err)
{
  if (start_supervisor (g, o, so, err) < 0)
    return -1;
  if (probe (g, o, so, err) == 0)
    return 0;
  sr_error *stop_err = NULL;
  if (sb_session_stop (g, so->name, &stop_err) < 0)
    sr_error_free (stop_err);
  return -1;
}

/* ---- stop, reclaim, list --------------------------------------------------- */

static void
wait_pidfd (int pidfd, int ms)
{
  struct pollfd p = { .fd = pidfd, .events = POLLIN };
  poll (&p, 1, ms);
}

/* The supervisor is dead: wait for its watchdog (it holds the bundle's
 * lock while it deletes the container), then remove what is left. */
static void
reclaim_dead (const struct sr_globals *g, const char *dir)
{
  _cleanup_free_ char *info = xasprintf ("%s/" INFO_FILE, dir);
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  sr_error *err = NULL;

  if (sr_read_file_at (AT_FDCWD, info, INFO_MAX, &buf, &len, &err) == 0)
    {
      struct sb_session s = { .pidfd = -1 };
      parse_info (&s, buf, len);
      if (s.b.id != NULL)
        {
          _cleanup_free_ char *lock = xasprintf (
              "%s/" SB_STATE_DIR "/%s/" LOCK_FILE, g->root, s.b.id);
          _cleanup_close_ int fd
              = open (lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
          if (fd >= 0)
            flock (fd, LOCK_EX);
        }
      sb_session_close (&s);
    }
  sr_error_free (err);
  sb_reclaim (g);
  remove_session_dir (dir);
}

void
sb_session_reclaim (const struct sr_globals *g)
{
  _cleanup_free_ char *sdir = sessions_dir (g);
  DIR *d = opendir (sdir);
  struct dirent *de;
  if (d == NULL)
    return;
  while ((de = readdir (d)) != NULL)
    {
      if (de->d_name[0] == '.')
        continue;
      _cleanup_free_ char *dir = xasprintf ("%s/%s", sdir, de->d_name);
      if (!lock_held (dir))
        reclaim_dead (g, dir);
    }
  closedir (d);
}

int
sb_session_stop (const struct sr_globals *g, const char *name, sr_error **err)
{
  struct sb_session s;
  if (sb_session_open (g, name, &s, err) < 0)
    {
      sb_session_close (&s);
      return -1;
    }
  syscall (SYS_pidfd_send_signal, s.pidfd, SIGTERM, NULL, 0);
  wait_pidfd (s.pidfd, STOP_WAIT_MS);
  if (syscall (SYS_pidfd_send_signal, s.pidfd, 0, NULL, 0) == 0)
    {
      syscall (SYS_pidfd_send_signal, s.pidfd, SIGKILL, NULL, 0);
      wait_pidfd (s.pidfd, STOP_WAIT_MS);
    }
  /* Whatever it did not remove itself. */
  struct stat st;
  if (stat (s.dir, &st) == 0 && !lock_held (s.dir))
    reclaim_dead (g, s.dir);
  sb_session_close (&s);
  return 0;
}

static void
list_one (yajl_gen gen, const struct sb_session *s)
{
  yajl_gen_map_open (gen);
  sr_json_gen_str (gen, "name");
  sr_json_gen_str (gen, s->name);
  sr_json_gen_str (gen, "id");
  sr_json_gen_str (gen, s->b.id);
  sr_json_gen_str (gen, "pid");
  yajl_gen_integer (gen, s->pid);
  sr_json_gen_str (gen, "created");
  sr_json_gen_str (gen, s->created != NULL ? s->created : "");
  sr_json_gen_str (gen, "kernel");
  if (s->kernel != NULL)
    sr_json_gen_str (gen, s->kernel);
  else
    yajl_gen_null (gen);
  sr_json_gen_str (gen, "idle_timeout_ms");
  yajl_gen_integer (gen, s->idle_ms);
  sr_json_gen_str (gen, "max_lifetime_ms");
  yajl_gen_integer (gen, s->lifetime_ms);
  yajl_gen_map_close (gen);
}

int
sb_session_list (const struct sr_globals *g, bool json, sr_error **err)
{
  _cleanup_free_ char *sdir = sessions_dir (g);
  yajl_gen gen = sr_json_gen_new (true);
  (void) err;

  sb_session_reclaim (g);
  if (!json)
    printf ("%-24s %-24s %-8s %s\n", "NAME", "ID", "KERNEL", "CREATED");
  yajl_gen_array_open (gen);
  DIR *d = opendir (sdir);
  struct dirent *de;
  while (d != NULL && (de = readdir (d)) != NULL)
    {
      struct sb_session s;
      sr_error *e = NULL;
      if (de->d_name[0] == '.')
        continue;
      if (sb_session_open (g, de->d_name, &s, &e) == 0)
        {
          if (json)
            list_one (gen, &s);
          else
            printf ("%-24s %-24s %-8s %s\n", s.name, s.b.id,
                    s.kernel ? s.kernel : "-", s.created ? s.created : "");
        }
      sr_error_free (e);
      sb_session_close (&s);
    }
  if (d != NULL)
    closedir (d);
  yajl_gen_array_close (gen);
  _cleanup_free_ char *out = sr_json_gen_take (gen, true);
  if (json)
    fputs (out, stdout);
  return 0;
}
