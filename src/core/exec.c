/* `exec`, the parent side: check the container, compose the process, clone
 * the child (exec_join.c) into the container's cgroup, answer it, then wait
 * for the process in the foreground or return once it has exec'd. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
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

/* What an exec loads about the container, once per exec or once for many
 * (sr_exec_prepare): the state, the saved config, the cgroup, the seccomp
 * program and a pidfd of the init with the namespaces to join. */
struct sr_exec_prepared
{
  const struct sr_globals *g;
  char *id;
  sr_container c;
  const oci_config *cfg; /* c's saved config */
  sr_cgroup *cg;
  sr_seccomp_prog *seccomp;
  pid_t init_pid;
  unsigned long long init_start_time;
  int init_pidfd;
  int join_flags;
};

/* Everything one exec holds while it runs, released in one place; until
 * the process has exec'd, its processes are killed there too. */
struct exec_txn
{
  const struct sr_exec_prepared *prep;
  const struct sr_exec_opts *opts;
  const char *id;
  struct sr_exec_process proc;
  oci_config cfg; /* the container's, with proc.p as its process */
  sr_cgroup *cg;     /* the one the process joins: the prepared one, */
  sr_cgroup *sub_cg; /* or --cgroup's sub-cgroup, this exec's own */
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
  sr_cgroup_free (t->sub_cg);
  sr_exec_process_clear (&t->proc);
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

/* The process of this exec, from the container's and the options; and what
 * needs the host's view, as create checks the init's. */
static int
compose (struct exec_txn *t, sr_error **err)
{
  const oci_config *cfg = t->prep->cfg;

  if (sr_exec_process_make (cfg->process, t->opts, &t->proc, err) < 0)
    return -1;
  t->cfg = *cfg;
  t->cfg.process = &t->proc.p;
  if (check_terminal (t, err) < 0)
    return -1;
  if (sr_apparmor_check (&t->proc.p, err) < 0 || sr_selinux_check (&t->cfg, err) < 0)
    return -1;
  return sr_exec_cpu_affinity_check (t->proc.p.exec_cpu_affinity, err);
}

/* The container as it is now: a prepared exec may run long after it
 * loaded the state (paused since, or its init gone). */
static int
check_now (struct exec_txn *t, sr_error **err)
{
  sr_container c = t->prep->c;
  c.status = sr_container_status_now (&c, t->prep->cg);
  return check_status (&c, t->opts->ignore_paused, err);
}

/* A pidfd pins the init; then it is the recorded one if that is alive
 * now. */
static int
open_init (struct sr_exec_prepared *p, sr_error **err)
{
  p->init_pid = p->c.rec.pid;
  p->init_start_time = p->c.rec.start_time;
  p->init_pidfd = (int) syscall (SYS_pidfd_open, p->init_pid, 0);
  if (p->init_pidfd < 0 && errno != ENOSYS && errno != ESRCH)
    return sr_fail (err, errno, "open the container's init (pid %d)", (int) p->init_pid);
  if (!sr_init_alive (p->init_pid, p->init_start_time))
    return sr_fail (err, 0, "cannot exec in a stopped container");
  return sr_exec_ns_to_join (p->init_pid, &p->join_flags, err);
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
  const struct sr_exec_prepared *p = t->prep;
  struct sr_spawn_ctx *s = &t->child.spawn;
  t->cg = p->cg;
  if (t->opts->cgroups != NULL && p->c.rec.cgroup_path != NULL)
    {
      if (sr_cgroup_open_sub (p->c.rec.cgroup_path, t->opts->cgroups, &t->sub_cg, err) < 0)
        return -1;
      t->cg = t->sub_cg;
    }
  if (open_console (t, err) < 0)
    return -1;
  t->child.init_pid = p->init_pid;
  t->child.init_start_time = p->init_start_time;
  t->child.init_pidfd = p->init_pidfd; /* the prepared one: not ours to close */
  t->child.join_flags = p->join_flags;

  s->cfg = &t->cfg;
  s->id = t->id;
  s->cg = t->cg;
  s->seccomp = p->seccomp;
  s->preserve_fds = t->opts->preserve_fds;
  s->runtime_fds[0] = s->runtime_fds[1] = -1; /* the child closes every fd of ours */
  s->want_notify_fd = p->seccomp != NULL && sr_seccomp_prog_uses_notify (p->seccomp);
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
  sr_container c = t->prep->c;
  _cleanup_free_ char *state = sr_container_state_json (&c);
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
  if (t->opts->pid != NULL)
    *t->opts->pid = s->pid;
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

void
sr_exec_prepared_free (sr_exec_prepared *p)
{
  if (p == NULL)
    return;
  sr_close (p->init_pidfd);
  sr_seccomp_prog_free (p->seccomp);
  sr_cgroup_free (p->cg);
  sr_container_release (&p->c);
  free (p->id);
  free (p);
}

static int
prepare (sr_exec_prepared *p, sr_error **err)
{
  /* No lock, as kill: an exec waits for its process, which a paused
   * container (--ignore-paused) holds until `resume`, which locks.  A
   * paused one is told apart at each run, with its options. */
  if (sr_container_load (p->g, p->id, false, &p->c, err) < 0
      || check_status (&p->c, true, err) < 0)
    return -1;
  p->cfg = sr_container_config (&p->c, err);
  if (p->cfg == NULL)
    return sr_wrap (err, "saved config");
  if (p->cfg->process == NULL)
    return sr_fail (err, EINVAL, "saved config: no process");
  if (p->c.rec.cgroup_path != NULL && sr_cgroup_open (p->c.rec.cgroup_path, &p->cg, err) < 0)
    return -1;
  if (p->cfg->linux_ != NULL && p->cfg->linux_->seccomp != NULL)
    {
      _cleanup_free_ char *cache = xasprintf ("%s/.cache", p->g->root);
      if (sr_seccomp_prepare (p->cfg->linux_->seccomp, cache, &p->seccomp, err) < 0)
        return -1; /* its messages start with "seccomp" */
    }
  return open_init (p, err);
}

int
sr_exec_prepare (const struct sr_globals *g, const char *id, sr_exec_prepared **out,
                 sr_error **err)
{
  sr_exec_prepared *p = xcalloc (1, sizeof *p);

  p->g = g;
  p->id = xstrdup (id);
  p->c = (sr_container) SR_CONTAINER_INIT;
  p->init_pidfd = -1;
  if (prepare (p, err) < 0)
    {
      sr_exec_prepared_free (p);
      return sr_wrap (err, "exec \"%s\"", id);
    }
  *out = p;
  return 0;
}

int
sr_exec_prepared_run (const sr_exec_prepared *p, const struct sr_exec_opts *opts,
                      int *exit_status, sr_error **err)
{
  __attribute__ ((cleanup (exec_txn_release))) struct exec_txn t = {
    .prep = p, .opts = opts, .id = p->id, .console_relay = -1,
    .child = { .init_pidfd = -1,
               .spawn = { .console_socket = -1, .fifo_fd = -1, .pidfd = -1, .sync_fd = -1 } },
  };
  sigset_t set, old;
  int r;

  *exit_status = 0;
  if (check_now (&t, err) < 0 || compose (&t, err) < 0 || allocate (&t, err) < 0)
    return sr_wrap (err, "exec \"%s\"", p->id);

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
    return sr_wrap (err, "exec \"%s\"", p->id);
  return 0;
}

int
sr_container_exec (const struct sr_globals *g, const char *id,
                   const struct sr_exec_opts *opts, int *exit_status, sr_error **err)
{
  sr_exec_prepared *p = NULL;

  *exit_status = 0;
  if (sr_exec_prepare (g, id, &p, err) < 0)
    return -1;
  int r = sr_exec_prepared_run (p, opts, exit_status, err);
  sr_exec_prepared_free (p);
  return r;
}
