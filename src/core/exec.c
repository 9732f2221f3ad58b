/* `exec`, the parent side: check the container, compose the process, clone
 * the child (exec_join.c) into the container's cgroup, answer it, then wait
 * for the process in the foreground or return once it has exec'd. */
#include <errno.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec_internal.h"
#include "linux_attrs_internal.h"
#include "util/fdpass.h"
#include "core/foreground.h"
#include "core/lifecycle.h"
#include "core/seccomp.h"
#include "core/sync.h"
#include "sandrun/util.h"

/* Everything an exec holds while it runs, released in one place; until the
 * process has exec'd, its processes are killed there too. */
struct exec_txn
{
  const struct sr_globals *g;
  const struct sr_exec_opts *opts;
  const char *id;
  sr_container c;
  struct sr_exec_process proc;
  oci_config cfg; /* the container's, with proc.p as its process */
  sr_cgroup *cg;
  sr_seccomp_prog *seccomp;
  struct sr_exec_child child;
  int console_relay; /* a terminal and no --console-socket */
  bool started;
};

static void
kill_and_reap (pid_t pid)
{
  if (pid <= 0)
    return;
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
}

static void
exec_txn_release (struct exec_txn *t)
{
  struct sr_spawn_ctx *s = &t->child.spawn;

  if (!t->started)
    {
      kill_and_reap (s->clone_pid);
      if (s->pid != s->clone_pid)
        kill_and_reap (s->pid);
    }
  sr_close (s->sync_fd);
  sr_close (s->pidfd);
  sr_close (s->console_socket);
  sr_close (t->console_relay);
  sr_close (t->child.init_pidfd);
  sr_seccomp_prog_free (t->seccomp);
  sr_cgroup_free (t->cg);
  sr_exec_process_clear (&t->proc);
  sr_container_release (&t->c);
}

/* runc allows exec into a created or running container. */
static int
check_status (const sr_container *c, bool ignore_paused, sr_error **err)
{
  switch (c->status)
    {
    case SR_STATUS_CREATED:
    case SR_STATUS_RUNNING:
      return 0;
    case SR_STATUS_PAUSED:
      if (ignore_paused)
        return 0;
      return sr_fail (err, 0, "cannot exec in a paused container (use --ignore-paused to "
                      "override)");
    default:
      return sr_fail (err, 0, "cannot exec in a %s container", sr_status_name (c->status));
    }
}

static int
check_terminal (const struct exec_txn *t, sr_error **err)
{
  bool terminal = t->proc.p.terminal;

  if (terminal && t->opts->detach && t->opts->console_socket == NULL)
    return sr_fail (err, EINVAL, "a terminal for a detached exec needs --console-socket");
  if (!terminal && t->opts->console_socket != NULL)
    return sr_fail (err, EINVAL, "--console-socket needs a terminal (--tty)");
  return 0;
}

static int
load (struct exec_txn *t, sr_error **err)
{
  const oci_config *cfg;

  /* No lock, as kill: an exec waits for its process, which a paused
   * container (--ignore-paused) holds until `resume`, which locks. */
  if (sr_container_load (t->g, t->id, false, &t->c, err) < 0
      || check_status (&t->c, t->opts->ignore_paused, err) < 0)
    return -1;
  cfg = sr_container_config (&t->c, err);
  if (cfg == NULL)
    return sr_wrap (err, "saved config");
  if (cfg->process == NULL)
    return sr_fail (err, EINVAL, "saved config: no process");
  if (sr_exec_process_make (cfg->process, t->opts, &t->proc, err) < 0)
    return -1;
  t->cfg = *cfg;
  t->cfg.process = &t->proc.p;
  if (check_terminal (t, err) < 0)
    return -1;
  /* What needs the host's view, as create checks the init's. */
  if (sr_apparmor_check (&t->proc.p, err) < 0 || sr_selinux_check (&t->cfg, err) < 0)
    return -1;
  return sr_exec_cpu_affinity_check (t->proc.p.exec_cpu_affinity, err);
}

/* A pidfd pins the init; then it is the recorded one if that is alive
 * now. */
static int
open_init (struct exec_txn *t, sr_error **err)
{
  struct sr_exec_child *x = &t->child;

  x->init_pid = t->c.rec.pid;
  x->init_start_time = t->c.rec.start_time;
  x->init_pidfd = (int) syscall (SYS_pidfd_open, x->init_pid, 0);
  if (x->init_pidfd < 0 && errno != ENOSYS && errno != ESRCH)
    return sr_fail (err, errno, "open the container's init (pid %d)", (int) x->init_pid);
  if (!sr_init_alive (x->init_pid, x->init_start_time))
    return sr_fail (err, 0, "cannot exec in a stopped container");
  return sr_exec_ns_to_join (x->init_pid, &x->join_flags, err);
}

static int
open_console (struct exec_txn *t, sr_error **err)
{
  struct sr_spawn_ctx *s = &t->child.spawn;
  int sv[2];

  if (t->opts->console_socket != NULL)
    {
      s->console_socket = sr_unix_connect (t->opts->console_socket, err);
      return s->console_socket < 0 ? sr_wrap (err, "console socket") : 0;
    }
  if (!t->proc.p.terminal)
    return 0;
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return sr_fail (err, errno, "console socket");
  t->console_relay = sv[0];
  s->console_socket = sv[1];
  return 0;
}

static int
allocate (struct exec_txn *t, sr_error **err)
{
  const oci_linux *l = t->cfg.linux_;
  struct sr_spawn_ctx *s = &t->child.spawn;

  if (t->c.rec.cgroup_path != NULL
      && sr_cgroup_open_sub (t->c.rec.cgroup_path, t->opts->cgroups, &t->cg, err) < 0)
    return -1;
  if (l != NULL && l->seccomp != NULL)
    {
      _cleanup_free_ char *cache = xasprintf ("%s/.cache", t->g->root);
      if (sr_seccomp_prepare (l->seccomp, cache, &t->seccomp, err) < 0)
        return -1; /* its messages start with "seccomp" */
    }
  if (open_console (t, err) < 0 || open_init (t, err) < 0)
    return -1;

  s->cfg = &t->cfg;
  s->id = t->id;
  s->cg = t->cg;
  s->seccomp = t->seccomp;
  s->preserve_fds = t->opts->preserve_fds;
  s->runtime_fds[0] = s->runtime_fds[1] = -1; /* the child closes every fd of ours */
  s->want_notify_fd = t->seccomp != NULL && sr_seccomp_prog_uses_notify (t->seccomp);
  s->child_main = sr_exec_child_main;
  return 0;
}

/* ---- the child's script (sync.h) ------------------------------------------ */

/* The next message, which must be of `type` (an ERROR becomes *err). */
static int
expect_message (int sync, enum sr_sync_type type, struct sr_sync_msg *msg, sr_error **err)
{
  if (sr_sync_recv (sync, msg, err) < 0)
    return -1;
  if (msg->hdr.type == SR_SYNC_ERROR)
    return sr_sync_error_from (msg, err);
  if (msg->hdr.type == type)
    return 0;
  sr_close (msg->fd);
  return sr_fail (err, EPROTO, "sync: expected message %d, got %d", type, msg->hdr.type);
}

static int
receive_pid (struct sr_spawn_ctx *s, sr_error **err)
{
  struct sr_sync_msg msg;

  if (expect_message (s->sync_fd, SR_SYNC_PID, &msg, err) < 0)
    return -1;
  if (msg.hdr.value <= 0)
    return sr_fail (err, EPROTO, "sync: invalid pid %d", msg.hdr.value);
  s->pid = msg.hdr.value;
  if (s->pid != s->clone_pid)
    {
      /* The intermediate that forked it exits right after. */
      waitpid (s->clone_pid, NULL, 0);
      s->clone_pid = 0;
    }
  return 0;
}

static int
forward_listener (struct exec_txn *t, sr_error **err)
{
  _cleanup_free_ char *state = sr_container_state_json (&t->c);
  return sr_seccomp_hand_listener (t->cfg.linux_->seccomp, t->child.spawn.sync_fd,
                                   t->child.spawn.pid, state, err);
}

/* After READY the child only execs: its end of the sync socket closes with
 * it (close-on-exec), or an ERROR says why execve failed. */
static int
wait_for_execve (int sync, sr_error **err)
{
  _cleanup_error_ sr_error *recv_err = NULL;
  struct sr_sync_msg msg;

  if (sr_sync_recv (sync, &msg, &recv_err) < 0)
    {
      if (recv_err->errnum == EPIPE)
        return 0;
      return sr_fail (err, recv_err->errnum, "%s", recv_err->msg);
    }
  if (msg.hdr.type == SR_SYNC_ERROR)
    return sr_sync_error_from (&msg, err);
  sr_close (msg.fd);
  return sr_fail (err, EPROTO, "sync: unexpected message %d after READY", msg.hdr.type);
}

static int
drive_child (struct exec_txn *t, sr_error **err)
{
  struct sr_spawn_ctx *s = &t->child.spawn;

  if (t->cg != NULL && sr_cgroup_enter (t->cg, s->clone_pid, s->cg_joined, err) < 0)
    return sr_wrap (err, "join the cgroup");
  if (sr_sync_send (s->sync_fd, SR_SYNC_STEP, SR_STEP_CGROUP_DONE, NULL, err) < 0
      || receive_pid (s, err) < 0)
    return -1;
  if (s->want_notify_fd && forward_listener (t, err) < 0)
    return -1;
  if (sr_sync_expect_step (s->sync_fd, SR_STEP_READY, err) < 0
      || wait_for_execve (s->sync_fd, err) < 0)
    return -1;
  t->started = true;
  if (t->opts->pid_file != NULL)
    return sr_write_pid_file (t->opts->pid_file, s->pid, err);
  return 0;
}

/* ---- the foreground --------------------------------------------------------- */

static int
wait_foreground (struct exec_txn *t, const sigset_t *set, int *exit_status, sr_error **err)
{
  _cleanup_close_ int master = -1;
  struct termios saved;

  if (t->console_relay >= 0)
    {
      master = sr_recv_fd (t->console_relay, NULL, 0, err);
      if (master < 0)
        return sr_wrap (err, "receive the terminal");
    }
  bool raw = master >= 0 && sr_foreground_raw_terminal (&saved) == 0;
  *exit_status = sr_foreground_wait (t->child.spawn.pid, master, set);
  if (raw)
    sr_foreground_restore_terminal (&saved);
  return 0;
}

int
sr_container_exec (const struct sr_globals *g, const char *id,
                   const struct sr_exec_opts *opts, int *exit_status, sr_error **err)
{
  __attribute__ ((cleanup (exec_txn_release))) struct exec_txn t = {
    .g = g, .opts = opts, .id = id, .c = SR_CONTAINER_INIT, .console_relay = -1,
    .child = { .init_pidfd = -1,
               .spawn = { .console_socket = -1, .fifo_fd = -1, .pidfd = -1, .sync_fd = -1 } },
  };
  sigset_t set, old;
  int r;

  *exit_status = 0;
  if (load (&t, err) < 0 || allocate (&t, err) < 0)
    return sr_wrap (err, "exec \"%s\"", id);

  /* In the foreground, signals are relayed: block them before the clone so
   * that none is lost.  The child unblocks them for itself. */
  sigemptyset (&set);
  if (!opts->detach)
    sr_foreground_block_signals (&set, &old);
  r = sr_spawn_clone (&t.child.spawn, err);
  if (r == 0)
    r = drive_child (&t, err);
  if (r == 0 && !opts->detach)
    r = wait_foreground (&t, &set, exit_status, err);
  if (!opts->detach)
    sigprocmask (SIG_SETMASK, &old, NULL);
  if (r < 0)
    return sr_wrap (err, "exec \"%s\"", id);
  return 0;
}
