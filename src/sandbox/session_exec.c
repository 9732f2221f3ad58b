/* One execution in a session (see session.h): the core's exec API runs the
 * command (or, in a kernel session, the driver's client) in the session's
 * container with pipes for its output; the one-shot's supervisor loop,
 * stats, file diff and receipt do the rest.  A timeout stops the command and
 * every process that appeared in the sandbox since it started. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "files.h"
#include "session.h"
#include "session_egress.h"
#include "session_spawn.h"
#include "stats.h"
#include "supervisor.h"
#include "sandrun/exec.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

#define MAX_CODE (1 << 20)
#define MAX_RESULT (256 * 1024)

struct session_exec
{
  const struct sr_globals *g;
  const struct sb_session *s;
  struct sb_supervisor sv;
  struct sb_outcome res;
  struct sb_receipt rc;
  struct sb_files before, changes;
  struct sb_usage start_usage;
  struct sb_kernel_result kernel;
  struct sb_session_egress egress;
  pid_t *old_pids;
  size_t n_old;
  int in_fd, out_w, err_w, result_r, result_w;
  int busy_fd;
  int conn; /* to the worker that started the process */
  int64_t next_interrupt_ms;
  sigset_t old_mask;
};

static void
release (struct session_exec *x)
{
  sb_files_clear (&x->before);
  sb_files_clear (&x->changes);
  sb_supervisor_clear (&x->sv);
  sr_close (x->in_fd);
  sr_close (x->out_w);
  sr_close (x->err_w);
  sr_close (x->result_r);
  sr_close (x->result_w);
  sr_close (x->busy_fd);
  sr_close (x->conn);
  free (x->old_pids);
  sb_kernel_result_clear (&x->kernel);
  sb_session_egress_clear (&x->egress);
  free (x->res.start_error);
  sb_receipt_clear (&x->rc);
  sigprocmask (SIG_SETMASK, &x->old_mask, NULL);
}

/* The largest number of processes seen (the session's, which counts
 * what earlier executions left running).  Never stops the run: a session's
 * --workdir growth is not watched (yet). */
static bool
sample_pids (void *arg)
{
  struct session_exec *x = arg;
  sb_stats_sample_pids (x->g, x->s->b.id, &x->rc.usage);
  /* A kernel client that timed out is interrupted again and again: one
   * SIGINT that came while it was starting (ignored then) is not lost. */
  if (x->sv.interrupt_first && x->res.timed_out
      && sr_monotonic_ms () >= x->next_interrupt_ms)
    {
      syscall (SYS_pidfd_send_signal, x->sv.pidfd, SIGINT, NULL, 0);
      x->next_interrupt_ms = sr_monotonic_ms () + 250;
    }
  return false;
}

/* Kill the execution's process and every process that was not in the
 * sandbox when it started. */
static void
kill_new (struct sb_supervisor *sv, int sig)
{
  struct session_exec *x = sv->data;
  syscall (SYS_pidfd_send_signal, sv->pidfd, sig, NULL, 0);
  /* A kernel execution's processes are the interpreter's: its client
   * stops them, and restarts the interpreter when it must (not ours to
   * kill with the rest). */
  if (sig != SIGKILL || sv->interrupt_first)
    return;
  sb_spawn_kill_new (x->g, x->s->b.id, x->old_pids, x->n_old);
}

/* The session's supervisor starts the process with the pipes as its
 * stdio (session_spawn.h). */
static int
spawn (struct session_exec *x, const struct sb_options *o, char **argv,
       sr_error **err)
{
  struct sb_spawn_request rq = {
    .args = argv,
    .env = o->env,
    .cwd = "/work",
    .fds = { x->in_fd, x->out_w, x->err_w, x->result_w },
    /* what the worker kills if we die: as kill_new, not for a kernel's */
    .sweep = x->result_w < 0,
    .keep = x->old_pids,
    .n_keep = x->n_old,
  };
  _cleanup_close_ int null = -1;
  /* Without code or --stdin, the caller's stdin, as for a one-shot. */
  if (rq.fds[0] < 0 && fcntl (0, F_GETFD) >= 0)
    rq.fds[0] = 0;
  else if (rq.fds[0] < 0)
    rq.fds[0] = null = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  return sb_spawn_start (x->s->dir, &rq, &x->conn, &x->sv.pid, &x->sv.pidfd,
                         err);
}

static int
worker_exit (struct sb_supervisor *sv, struct sr_exit *ex)
{
  struct session_exec *x = sv->data;
  _cleanup_error_ sr_error *err = NULL;
  return sb_spawn_wait (x->conn, ex, &err);
}

static int
make_pipe (int *r, int *w, sr_error **err)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return sr_fail (err, errno, "pipe");
  *r = p[0];
  *w = p[1];
  return 0;
}

/* The code as the client's stdin: all of it in the pipe before it runs. */
static int
code_pipe (struct session_exec *x, const char *code, sr_error **err)
{
  size_t n = strlen (code);
  int w = -1;
  if (n > MAX_CODE)
    return sr_fail (err, E2BIG, "--code is larger than 1 MiB");
  if (make_pipe (&x->in_fd, &w, err) < 0)
    return -1;
  /* All of it must fit before the client reads: no writer thread. */
  int size = fcntl (w, F_SETPIPE_SZ, (int) n + 1);
  if (size < 0) /* beyond fs.pipe-max-size (1 MiB by default) */
    size = fcntl (w, F_SETPIPE_SZ, MAX_CODE);
  if (size < 0 || (size_t) size < n)
    {
      close (w);
      return sr_fail (err, E2BIG,
                      "the code (%zu bytes) does not fit in a pipe "
                      "(fs.pipe-max-size)",
                      n);
    }
  ssize_t r = sr_write_all (w, code, n);
  close (w);
  if (r < 0)
    return sr_fail (err, errno, "write the code");
  return 0;
}

static int
prepare (struct session_exec *x, const struct sb_options *o, const char *code,
         sr_error **err)
{
  sigset_t set;
  bool to_caller = !o->quiet && !str_eq (o->receipt, "-");

  if (make_pipe (&x->sv.out.fd, &x->out_w, err) < 0
      || make_pipe (&x->sv.err.fd, &x->err_w, err) < 0)
    return -1;
  x->sv.out.copy_to = to_caller ? 1 : -1;
  x->sv.err.copy_to = to_caller ? 2 : -1;
  if (code != NULL)
    {
      if (code_pipe (x, code, err) < 0
          || make_pipe (&x->result_r, &x->result_w, err) < 0)
        return -1;
      fcntl (x->result_r, F_SETFL, O_NONBLOCK);
    }
  else if (o->stdin_file != NULL)
    {
      x->in_fd = open (o->stdin_file, O_RDONLY | O_CLOEXEC);
      if (x->in_fd < 0)
        return sr_fail (err, errno, "--stdin \"%s\"", o->stdin_file);
    }
  sb_supervisor_block_signals (&set, &x->old_mask);
  x->sv.sigfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (x->sv.sigfd < 0)
    return sr_fail (err, errno, "signalfd");
  /* Not idle while it runs. */
  _cleanup_free_ char *busy = xasprintf ("%s/busy", x->s->dir);
  x->busy_fd = open (busy, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (x->busy_fd >= 0)
    flock (x->busy_fd, LOCK_SH);
  sb_session_touch (x->s);
  if (sb_files_snapshot (x->s->b.work, &x->before, err) < 0)
    return -1;
  sb_stats_collect (x->g, x->s->b.id, &x->start_usage);
  return sr_container_pids (x->g, x->s->b.id, &x->old_pids, &x->n_old, err);
}

/* The counters of this execution: the session's since it started. */
static void
usage_since (struct sb_usage *u, const struct sb_usage *start)
{
  u->cpu_user_us
      -= u->cpu_user_us >= start->cpu_user_us ? start->cpu_user_us : 0;
  u->cpu_system_us
      -= u->cpu_system_us >= start->cpu_system_us ? start->cpu_system_us : 0;
  u->oom_kills -= u->oom_kills >= start->oom_kills ? start->oom_kills : 0;
  u->memory_max_events -= u->memory_max_events >= start->memory_max_events
                              ? start->memory_max_events
                              : 0;
  u->pids_max_events -= u->pids_max_events >= start->pids_max_events
                            ? start->pids_max_events
                            : 0;
}

static char *
json_text (yajl_val v, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val s = yajl_tree_get (v, path, yajl_t_string);
  return s != NULL ? xstrdup (YAJL_GET_STRING (s)) : NULL;
}

static bool
json_true (yajl_val v, const char *key)
{
  const char *path[] = { key, NULL };
  return YAJL_IS_TRUE (yajl_tree_get (v, path, yajl_t_true));
}

/* What the driver's client said on fd 3 (hostile: parsed, bounded). */
static void
read_kernel_result (struct session_exec *x)
{
  _cleanup_free_ char *buf = xmalloc (MAX_RESULT + 1);
  size_t len = 0;
  ssize_t n;
  while (len < MAX_RESULT
         && (n = read (x->result_r, buf + len, MAX_RESULT - len)) > 0)
    len += (size_t) n;
  buf[len] = '\0';
  yajl_val v = len > 0 ? yajl_tree_parse (buf, NULL, 0) : NULL;
  if (v == NULL)
    {
      /* The client itself died: the interpreter's state cannot be known. */
      x->kernel.restarted = x->kernel.state_lost = x->res.signal != 0;
      return;
    }
  x->kernel.exception = json_text (v, "exception");
  x->kernel.traceback = json_text (v, "traceback");
  x->kernel.value = json_text (v, "value");
  x->kernel.interrupted = json_true (v, "interrupted");
  x->kernel.restarted = json_true (v, "restarted");
  x->kernel.state_lost = json_true (v, "state_lost");
  yajl_tree_free (v);
}

int
sb_session_exec (const struct sr_globals *g, const struct sb_session *s,
                 const struct sb_options *o, const char *code, int *status,
                 sr_error **err)
{
  __attribute__ ((cleanup (release))) struct session_exec x = {
    .g = g,
    .s = s,
    .sv = { .o = o,
            .pidfd = -1,
            .sigfd = -1,
            .out = { .fd = -1 },
            .err = { .fd = -1 },
            .kill = kill_new,
            .wait_exit = worker_exit,
            .interrupt_first = code != NULL },
    .in_fd = -1,
    .out_w = -1,
    .err_w = -1,
    .result_r = -1,
    .result_w = -1,
    .busy_fd = -1,
    .egress = SB_SESSION_EGRESS_INIT,
    .conn = -1,
  };
  /* SIGINT ignored until the client has its handler (see sample_pids);
   * -I -S: no site, no user paths: the client only relays. */
  static char *client[]
      = { "/bin/sh", "-c",
          "trap '' INT; exec python3 -I -S " SB_KERNEL_DRIVER " run", NULL };
  x.sv.data = &x;
  x.sv.sample = sample_pids;
  x.sv.sample_arg = &x;
  sigprocmask (SIG_SETMASK, NULL, &x.old_mask);

  if (prepare (&x, o, code, err) < 0
      || sb_session_egress_begin (s, &x.egress, err) < 0)
    return -1;
  x.rc.started_at = sr_now_rfc3339 ();
  x.sv.started_ms = sr_monotonic_ms ();
  if (spawn (&x, o, code != NULL ? client : o->argv, err) < 0)
    {
      if (!sb_outcome_start_failed (&x.res, x.sv.started_ms, err))
        return -1;
      fprintf (stderr, "sandrun: sandbox exec: %s\n", x.res.start_error);
    }
  sr_close (x.out_w);
  sr_close (x.err_w);
  sr_close (x.result_w);
  x.out_w = x.err_w = x.result_w = -1;
  if (x.res.start_error == NULL)
    sb_supervise (&x.sv, &x.res);
  sb_stats_collect (g, s->b.id, &x.rc.usage);
  if (x.res.start_error == NULL)
    sb_supervisor_reap (&x.sv, &x.res);
  usage_since (&x.rc.usage, &x.start_usage);
  sb_session_egress_end (s, &x.egress);
  if (code != NULL && x.res.start_error == NULL)
    read_kernel_result (&x);
  x.rc.finished_at = sr_now_rfc3339 ();
  if (sb_files_diff (s->b.work, &x.before, &x.changes, err) < 0)
    {
      sr_log (SR_LOG_WARNING, "session: %s", (*err)->msg);
      sr_error_free (*err);
      *err = NULL;
    }
  sb_session_touch (s);
  x.rc.session = s->name;
  x.rc.kernel = code != NULL ? &x.kernel : NULL;
  x.rc.egress = sb_session_egress_record (&x.egress);
  sb_receipt_set (&x.rc, o, &s->b, &x.sv, &x.res, &x.changes);
  sb_receipt_judge (&x.rc);
  if (x.kernel.state_lost)
    {
      char *m = xasprintf ("%s; the Python interpreter was restarted and the "
                           "session's variables and imports are lost",
                           x.rc.message);
      free (x.rc.message);
      x.rc.message = m;
    }
  *status = sb_outcome_status (&x.res);
  return sb_receipt_emit (&x.rc, o, err);
}
