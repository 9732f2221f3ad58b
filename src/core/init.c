/* The container init, from clone to execve: the ordered setup steps and
 * nothing else.  Any failure is reported to the parent over the sync socket
 * (sr_sync_die) and the init exits; it never returns into the parent's
 * code. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/fdpass.h"
#include "core/hooks.h"
#include "core/linux_attrs.h"
#include "sandrun/log.h"
#include "util/procfs.h"
#include "core/process.h"
#include "core/rootfs.h"
#include "util/safepath.h"
#include "sandrun/signals.h"
#include "core/spawn.h"
#include "core/sync.h"
#include "core/sysctl.h"
#include "core/terminal.h"
#include "sandrun/util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#define KEYCTL_JOIN_SESSION_KEYRING 1

/* Everything of the runtime's that the init does not need goes now, not at
 * execve: the locked state directory, the cgroup directories, whatever the
 * caller left open.  Until execve, a sibling in a shared pid namespace with
 * CAP_SYS_PTRACE could otherwise reach them through /proc/PID/fd. */
static void
close_runtime_fds (const struct sr_spawn_ctx *ctx, int sync)
{
  size_t n = 0;
  int *keep = xcalloc (ctx->ns.join_len + ctx->mount_fds.len + 4, sizeof (int));

  keep[n++] = sync;
  keep[n++] = ctx->fifo_fd;
  keep[n++] = ctx->console_socket;
  keep[n++] = sr_log_fd ();
  for (size_t i = 0; i < ctx->ns.join_len; i++)
    keep[n++] = ctx->ns.join_fds[i];
  for (size_t i = 0; i < ctx->mount_fds.len; i++)
    keep[n++] = ctx->mount_fds.fds[i];
  /* The lock goes even when an engine's fd numbering put it among the
   * preserved fds; the procfs handle is opened again on demand. */
  for (size_t i = 0; i < ARRAY_SIZE (ctx->runtime_fds); i++)
    sr_close (ctx->runtime_fds[i]);
  sr_procfs_reset ();
  sr_close_fds_except (3 + ctx->preserve_fds, keep, n);
  /* A caller's fd is never close-on-exec; in the preserved range, one that
   * is was opened by the runtime in a gap the caller left. */
  for (int fd = 3; fd < 3 + ctx->preserve_fds; fd++)
    {
      int flags = fcntl (fd, F_GETFD);
      bool kept = false;
      for (size_t i = 0; i < n; i++)
        kept = kept || keep[i] == fd;
      if (flags >= 0 && (flags & FD_CLOEXEC) && !kept)
        close (fd);
    }
  free (keep);
}

static int
ask_parent (int sync, enum sr_sync_step please, enum sr_sync_step done, sr_error **err)
{
  if (sr_sync_send (sync, SR_SYNC_STEP, please, NULL, err) < 0)
    return -1;
  return sr_sync_expect_step (sync, done, err);
}

/* In a new (or joined) user namespace, act as its root. */
int
sr_init_become_root (sr_error **err)
{
  if (setresgid (0, 0, 0) < 0)
    return sr_fail (err, errno, "setresgid to the user namespace's root");
  if (setresuid (0, 0, 0) < 0)
    return sr_fail (err, errno, "setresuid to the user namespace's root");
  return 0;
}

int
sr_init_fork_sibling (int sync, const char *what, sr_error **err)
{
  /* The new process waits until the PID message is on the socket: it must
   * not send its own messages first (the gate's write end closes when the
   * intermediate exits, right after sending). */
  int gate[2];
  if (pipe2 (gate, O_CLOEXEC) < 0)
    return sr_fail (err, errno, "fork %s: pipe", what);
  pid_t pid = (pid_t) syscall (SYS_clone, (unsigned long) (CLONE_PARENT | SIGCHLD),
                               NULL, NULL, NULL, 0);
  if (pid < 0)
    {
      int saved = errno;
      sr_close (gate[0]);
      sr_close (gate[1]);
      /* In a joined pid namespace whose init has exited, fork fails ENOMEM. */
      if (saved == ENOMEM)
        return sr_fail (err, saved, "fork %s (does its pid namespace still have an init?)", what);
      return sr_fail (err, saved, "fork %s", what);
    }
  if (pid == 0)
    {
      char c;
      sr_close (gate[1]);
      while (read (gate[0], &c, 1) < 0 && errno == EINTR)
        ;
      sr_close (gate[0]);
      return 0;
    }
  sr_close (gate[0]);
  sr_sync_send (sync, SR_SYNC_PID, pid, NULL, NULL);
  _exit (0);
}

/* The slow path: join namespaces by path, create the rest with unshare, and
 * fork the real init (a sibling: CLONE_PARENT) into the pid and time
 * namespaces that only apply to children.  Returns in the new init. */
static int
enter_namespaces_two_step (struct sr_spawn_ctx *ctx, int sync, sr_error **err)
{
  int new_flags = ctx->ns.new_flags & ~CLONE_NEWCGROUP;

  if (sr_ns_join (&ctx->ns, ctx->ns.join_flags & ~(CLONE_NEWPID | CLONE_NEWTIME), err) < 0)
    return -1;
  if (new_flags & CLONE_NEWUSER)
    {
      if (unshare (CLONE_NEWUSER) < 0)
        return sr_fail (err, errno, "create user namespace");
      if (ask_parent (sync, SR_STEP_IDMAP_PLEASE, SR_STEP_IDMAP_DONE, err) < 0)
        return -1;
    }
  if ((ctx->ns.new_flags | ctx->ns.join_flags) & CLONE_NEWUSER)
    if (sr_init_become_root (err) < 0)
      return -1;
  if ((new_flags & ~CLONE_NEWUSER) && unshare (new_flags & ~CLONE_NEWUSER) < 0)
    return sr_fail (err, errno, "create namespaces");
  if (ctx->want_timens
      && ask_parent (sync, SR_STEP_TIMENS_PLEASE, SR_STEP_TIMENS_DONE, err) < 0)
    return -1;
  if (sr_ns_join (&ctx->ns, CLONE_NEWPID | CLONE_NEWTIME, err) < 0)
    return -1;
  return sr_init_fork_sibling (sync, "the container init", err);
}

static int
enter_namespaces (struct sr_spawn_ctx *ctx, int sync, sr_error **err)
{
  if (ctx->ns.two_step)
    return enter_namespaces_two_step (ctx, sync, err);
  if (!ctx->want_idmap)
    return 0;
  if (ask_parent (sync, SR_STEP_IDMAP_PLEASE, SR_STEP_IDMAP_DONE, err) < 0)
    return -1;
  return sr_init_become_root (err);
}

/* A new network namespace starts with "lo" down; runc and crun bring it
 * up, and programs expect 127.0.0.1 to work. */
static int
loopback_up (sr_error **err)
{
  struct ifreq ifr;
  _cleanup_close_ int sock = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return sr_fail (err, errno, "bring up lo: socket");
  memset (&ifr, 0, sizeof ifr);
  strcpy (ifr.ifr_name, "lo");
  if (ioctl (sock, SIOCGIFFLAGS, &ifr) < 0)
    return sr_fail (err, errno, "bring up lo");
  if (ifr.ifr_flags & IFF_UP)
    return 0;
  ifr.ifr_flags |= IFF_UP;
  if (ioctl (sock, SIOCSIFFLAGS, &ifr) < 0)
    return sr_fail (err, errno, "bring up lo");
  return 0;
}

static int
set_names (const oci_config *cfg, int uts_flags, sr_error **err)
{
  if ((cfg->hostname != NULL || cfg->domainname != NULL) && !(uts_flags & CLONE_NEWUTS))
    return sr_fail (err, EINVAL, "setting the hostname needs the container's own uts namespace");
  if (cfg->hostname != NULL && sethostname (cfg->hostname, strlen (cfg->hostname)) < 0)
    return sr_fail (err, errno, "sethostname \"%s\"", cfg->hostname);
  if (cfg->domainname != NULL && setdomainname (cfg->domainname, strlen (cfg->domainname)) < 0)
    return sr_fail (err, errno, "setdomainname \"%s\"", cfg->domainname);
  return 0;
}

/* A session keyring of its own, so the container does not see the
 * runtime's keys. */
int
sr_init_join_session_keyring (const char *id, sr_error **err)
{
  _cleanup_free_ char *name = xasprintf ("_ses.%s", id);
  if (syscall (SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, name, 0, 0, 0) < 0
      && errno != ENOSYS && errno != EACCES)
    return sr_fail (err, errno, "join session keyring");
  return 0;
}

static int
receive_state_json (int sync, char **out, sr_error **err)
{
  struct sr_sync_msg msg;
  if (sr_sync_recv (sync, &msg, err) < 0)
    return -1;
  if (msg.hdr.type == SR_SYNC_ERROR)
    return sr_sync_error_from (&msg, err);
  if (msg.hdr.type != SR_SYNC_DATA)
    return sr_fail (err, EPROTO, "sync: expected the container state");
  *out = xstrdup (msg.text);
  return 0;
}

static int
run_hooks (const oci_config *cfg, size_t offset, const char *kind,
           const char *state_json, sr_error **err)
{
  if (cfg->hooks == NULL)
    return 0;
  const oci_hook_list *list = (const oci_hook_list *) ((const char *) cfg->hooks + offset);
  if (list->len == 0)
    return 0;
  return sr_hooks_run (list, kind, state_json, err);
}

/* runc creates a missing process.cwd (0755, as root, while the rootfs is
 * still writable); resolved in the root like every path below it. */
static int
ensure_cwd (const struct sr_spawn_ctx *ctx, sr_error **err)
{
  const char *cwd = ctx->cfg->process->cwd;
  if (cwd == NULL || cwd[0] != '/')
    return 0; /* refused with a clear error by the identity switch */
  _cleanup_close_ int rootfd = open (ctx->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return sr_fail (err, errno, "open rootfs \"%s\"", ctx->rootfs);
  int fd = sr_mkdir_in_root (rootfd, cwd, 0755, err);
  if (fd < 0)
    return sr_wrap (err, "process.cwd");
  sr_close (fd);
  return 0;
}

static int
setup_filesystem (struct sr_spawn_ctx *ctx, int sync, const char *state_json,
                  sr_error **err)
{
  struct sr_rootfs_ctx rctx = {
    .cfg = ctx->cfg,
    .rootfs = ctx->rootfs,
    .bundle = ctx->bundle,
    .no_pivot = ctx->no_pivot,
    .userns = ((ctx->ns.new_flags | ctx->ns.join_flags) & CLONE_NEWUSER) != 0,
    .mount_fds = &ctx->mount_fds,
  };

  if (sr_rootfs_prepare (&rctx, err) < 0 || ensure_cwd (ctx, err) < 0)
    return -1;
  if (ctx->want_hooks && ask_parent (sync, SR_STEP_HOOKS_PLEASE, SR_STEP_HOOKS_DONE, err) < 0)
    return -1;
  if (run_hooks (ctx->cfg, offsetof (oci_hooks, create_container), "createContainer",
                 state_json, err) < 0)
    return -1;
  if (sr_rootfs_pivot (&rctx, err) < 0)
    return -1;
  /* From here on /proc is the container's: forget the runtime's. */
  sr_procfs_reset ();
  if (sr_sysctl_apply (ctx->cfg, err) < 0)
    return -1;
  return sr_rootfs_finalize (&rctx, err);
}

int
sr_init_setup_process (struct sr_spawn_ctx *ctx, bool bind_console, sr_error **err)
{
  const oci_process *p = ctx->cfg->process;
  /* Without no_new_privs, loading the filter needs CAP_SYS_ADMIN: it stays
   * until then (runc loads the filter before dropping the capabilities and
   * still makes system calls after). */
  bool keep_admin = ctx->seccomp != NULL && !p->no_new_privileges;

  if (p->terminal && sr_terminal_setup (p, ctx->console_socket, bind_console, err) < 0)
    return -1;
  sr_close (ctx->console_socket);
  ctx->console_socket = -1;
  if (sr_rlimits_apply (p, err) < 0 || sr_oom_score_adj_apply (p, err) < 0)
    return -1;
  if (sr_linux_attrs_process (ctx->cfg, err) < 0)
    return -1;
  if (sr_process_switch_identity (p, keep_admin ? &ctx->caps_late : NULL, err) < 0)
    return -1;
  if (sr_linux_attrs_exec_labels (p, err) < 0)
    return -1;
  return sr_no_new_privs_apply (p, err);
}

int
sr_init_receive_listener (struct sr_spawn_ctx *ctx, int sync, sr_error **err)
{
  struct sr_sync_msg msg;

  if (sr_sync_recv (sync, &msg, err) < 0)
    return -1;
  if (msg.hdr.type == SR_SYNC_ERROR)
    return sr_sync_error_from (&msg, err);
  if (msg.hdr.type != SR_SYNC_FD || msg.hdr.value != SR_FD_SECCOMP_LISTENER || msg.fd < 0)
    {
      sr_close (msg.fd);
      return sr_fail (err, EPROTO, "sync: expected the seccomp listener's socket");
    }
  ctx->listener_fd = msg.fd; /* close-on-exec (MSG_CMSG_CLOEXEC) */
  ctx->listener_msg = xstrdup ("");
  ctx->listener_len = 0;
  do
    {
      if (sr_sync_recv (sync, &msg, err) < 0)
        return -1;
      if (msg.hdr.type == SR_SYNC_ERROR)
        return sr_sync_error_from (&msg, err);
      if (msg.hdr.type != SR_SYNC_DATA)
        return sr_fail (err, EPROTO, "sync: expected the seccomp listener's message");
      /* The parent's own document, bounded by the config it came from. */
      ctx->listener_msg = xrealloc (ctx->listener_msg, ctx->listener_len + msg.hdr.len + 1);
      memcpy (ctx->listener_msg + ctx->listener_len, msg.text, msg.hdr.len + 1);
      ctx->listener_len += msg.hdr.len;
    }
  while (msg.hdr.value != 0);
  return 0;
}

/* Under the container's filter a profile may deny anything but execve: no
 * allocation, no path lookup, no fd sweep here.  The listener fd is
 * close-on-exec (the kernel makes it so), and so is the socket it goes
 * over. */
int
sr_init_exec (struct sr_spawn_ctx *ctx, const char *exe, char *const *env, sr_error **err)
{
  int notify_fd = -1;

  if (sr_seccomp_load (ctx->seccomp, &notify_fd, err) < 0)
    return -1;
  if (notify_fd >= 0)
    {
      if (ctx->listener_msg == NULL)
        return sr_fail (err, EPROTO, "seccomp: no listener to hand the fd to");
      if (sr_send_fd (ctx->listener_fd, notify_fd, ctx->listener_msg, ctx->listener_len, err) < 0)
        return sr_wrap (err, "seccomp listener");
    }
  if (sr_capabilities_apply_late (&ctx->caps_late, err) < 0)
    return -1;
  execve (exe, ctx->cfg->process->args, env);
  return sr_fail_exec (err, errno, exe);
}

/* The process environment: process.env (with HOME from the container's
 * passwd when missing), plus LISTEN_FDS for socket activation passed
 * through. */
static char **
build_env (const struct sr_spawn_ctx *ctx)
{
  char **env = sr_process_env (ctx->cfg->process);

  if (ctx->listen_fds > 0)
    {
      _cleanup_free_ char *n = xasprintf ("LISTEN_FDS=%d", ctx->listen_fds);
      strv_append (&env, n);
      strv_append (&env, "LISTEN_PID=1");
    }
  return env;
}

/* Block until `start` writes to the exec fifo. */
static int
wait_for_start (int fifo_fd, sr_error **err)
{
  struct pollfd pfd = { .fd = fifo_fd, .events = POLLIN };
  char c;

  for (;;)
    {
      int r = poll (&pfd, 1, -1);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return sr_fail (err, errno, "wait for start");
      break;
    }
  if (read (fifo_fd, &c, 1) != 1)
    return sr_fail (err, EPIPE, "wait for start: the exec fifo was closed");
  /* The read end stays open (close-on-exec): `start` waits for it to close,
   * so that poststart hooks run after startContainer and the execve. */
  return 0;
}

/* The caller's fds as 0-2 (sr_create_opts.stdio): through copies above 2
 * first, since one of them may itself be 0, 1 or 2. */
static int
set_stdio (const int stdio[3], sr_error **err)
{
  int tmp[3];
  for (int i = 0; i < 3; i++)
    if ((tmp[i] = fcntl (stdio[i], F_DUPFD_CLOEXEC, 3)) < 0)
      return sr_fail (err, errno, "stdio: fd %d", stdio[i]);
  for (int i = 0; i < 3; i++)
    {
      if (dup2 (tmp[i], i) < 0)
        return sr_fail (err, errno, "stdio: fd %d", stdio[i]);
      close (tmp[i]);
    }
  return 0;
}

static int
init_run (struct sr_spawn_ctx *ctx, int sync, sr_error **err)
{
  _cleanup_free_ char *state_json = NULL;
  _cleanup_free_ char *exe = NULL;
  _cleanup_strv_ char **env = NULL;
  const oci_process *p = ctx->cfg->process;

  /* Not dumpable: nothing in the container may ptrace us or open our fds
   * through /proc while host fds are still open (CVE-2016-9962). */
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  sr_environ_wipe ();
  /* Handled signals fall back to the default at execve by themselves; an
   * ignored one would stay ignored in the container. */
  sr_signals_reset (ctx->ignored_signals);
  if (ctx->stdio != NULL && set_stdio (ctx->stdio, err) < 0)
    return -1;
  close_runtime_fds (ctx, sync);

  if (enter_namespaces (ctx, sync, err) < 0)
    return -1;
  /* Joined: the namespace fds are of no further use, and they are host
   * handles a sibling could reach through /proc until execve. */
  for (size_t i = 0; i < ctx->ns.join_len; i++)
    {
      sr_close (ctx->ns.join_fds[i]);
      ctx->ns.join_fds[i] = -1;
    }
  if (sr_sync_expect_step (sync, SR_STEP_CGROUP_DONE, err) < 0)
    return -1;
  sr_cpu_affinity_reset (NULL);
  if ((ctx->ns.new_flags & CLONE_NEWCGROUP) && unshare (CLONE_NEWCGROUP) < 0)
    return sr_fail (err, errno, "create cgroup namespace");
  if (ctx->want_state_data && receive_state_json (sync, &state_json, err) < 0)
    return -1;
  if (set_names (ctx->cfg, ctx->ns.new_flags | ctx->ns.join_flags, err) < 0)
    return -1;
  if ((ctx->ns.new_flags & CLONE_NEWNET) && loopback_up (err) < 0)
    return -1;
  if (!ctx->no_new_keyring && sr_init_join_session_keyring (ctx->id, err) < 0)
    return -1;
  if (setup_filesystem (ctx, sync, state_json, err) < 0)
    return -1;
  if (sr_init_setup_process (ctx, true, err) < 0)
    return -1;

  /* Everything the runtime still has to do happens before the seccomp
   * filter goes in (sr_init_exec): the PATH walk and the cwd check done as
   * the container's user, the fds marked, the startContainer hooks run.
   * The executable stays a checked path, not an fd: execveat of an fd hands
   * a script's interpreter /dev/fd/N, closed by then (close-on-exec), and
   * the path is the container's own, in its root. */
  exe = sr_process_find_executable (p, err);
  if (exe == NULL)
    return -1;
  env = build_env (ctx);
  if (sr_fds_cloexec_from (3 + ctx->preserve_fds, err) < 0)
    return -1;
  if (ctx->want_notify_fd && sr_init_receive_listener (ctx, sync, err) < 0)
    return -1;

  if (sr_sync_send (sync, SR_SYNC_STEP, SR_STEP_READY, NULL, err) < 0)
    return -1;
  if (sr_sync_expect_step (sync, SR_STEP_GO, err) < 0)
    return -1;
  /* The parent is done with us: from here on log lines go to the
   * container's stderr.  The socket itself stays open (close-on-exec): `run`
   * waits for its end before poststart, and hears a failure until then. */
  sr_log_set_forward_fd (-1);

  if (ctx->fifo_fd >= 0 && wait_for_start (ctx->fifo_fd, err) < 0)
    return -1;
  if (run_hooks (ctx->cfg, offsetof (oci_hooks, start_container), "startContainer",
                 state_json, err) < 0)
    return -1;
  return sr_init_exec (ctx, exe, env, err);
}

void
sr_init_main (struct sr_spawn_ctx *ctx, int sync_fd)
{
  sr_error *err = NULL;

  sr_log_set_forward_fd (sync_fd);
  init_run (ctx, sync_fd, &err);
  sr_sync_die (sync_fd, err);
}
