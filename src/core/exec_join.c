/* The exec child, from clone to execve: join the container's namespaces,
 * become its process, exec.  Every failure goes to the parent over the sync
 * socket (sr_sync_die); the child never returns into the parent's code.
 *
 * Until execve the child is not dumpable and holds no host fd but the sync
 * socket, the console socket and the init's pidfd (closed once joined), so
 * nothing in the container can reach the host through it (CVE-2016-9962),
 * and its cwd is checked to be inside the container (CVE-2024-21626). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "exec_internal.h"
#include "linux_attrs_internal.h"
#include "core/linux_attrs.h"
#include "core/lifecycle.h"
#include "sandrun/log.h"
#include "util/procfs.h"
#include "core/process.h"
#include "sandrun/signals.h"
#include "core/sync.h"
#include "sandrun/util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* In setns order: the user namespace first, the others may be owned by
 * it.  `ours` is the link that says what our children would get. */
static const struct
{
  const char *name;
  const char *ours;
  int flag;
} ns_links[] = {
  { "user", "user", CLONE_NEWUSER },  { "mnt", "mnt", CLONE_NEWNS },
  { "pid", "pid_for_children", CLONE_NEWPID },
  { "net", "net", CLONE_NEWNET },     { "ipc", "ipc", CLONE_NEWIPC },
  { "uts", "uts", CLONE_NEWUTS },     { "cgroup", "cgroup", CLONE_NEWCGROUP },
  { "time", "time_for_children", CLONE_NEWTIME },
};

int
sr_exec_ns_to_join (pid_t pid, int *flags, sr_error **err)
{
  *flags = 0;
  for (size_t i = 0; i < ARRAY_SIZE (ns_links); i++)
    {
      _cleanup_free_ char *ours_path = xasprintf ("self/ns/%s", ns_links[i].ours);
      _cleanup_free_ char *theirs_path = xasprintf ("%d/ns/%s", (int) pid, ns_links[i].name);
      _cleanup_error_ sr_error *missing = NULL;
      _cleanup_free_ char *ours = sr_procfs_readlink (ours_path, &missing);
      /* A namespace type this kernel does not have; any other failure
       * must not pass for "nothing to join". */
      if (ours == NULL && sr_error_errno (missing) == ENOENT)
        continue;
      if (ours == NULL && missing == NULL)
        return sr_fail (err, EIO, "our own %s namespace", ns_links[i].name);
      if (ours == NULL)
        {
          *err = missing;
          missing = NULL;
          return sr_wrap (err, "our own %s namespace", ns_links[i].name);
        }
      _cleanup_free_ char *theirs = sr_procfs_readlink (theirs_path, err);
      if (theirs == NULL)
        return sr_wrap (err, "namespaces of the container's init");
      if (strcmp (ours, theirs) != 0)
        *flags |= ns_links[i].flag;
    }
  return 0;
}

/* ---- joining ------------------------------------------------------------- */

struct ns_fds
{
  int fd[ARRAY_SIZE (ns_links)];
};

static void
ns_fds_close (struct ns_fds *n)
{
  for (size_t i = 0; i < ARRAY_SIZE (n->fd); i++)
    sr_close (n->fd[i]);
}

/* Kernels before 5.8 (setns takes no pidfd) or 5.3 (no pidfd at all): the
 * namespace files, opened while we still see the host's /proc, then
 * checked to belong to the recorded init (a pid is only reused once its
 * process is gone). */
static int
join_by_path (const struct sr_exec_child *x, sr_error **err)
{
  __attribute__ ((cleanup (ns_fds_close))) struct ns_fds n;

  memset (n.fd, -1, sizeof n.fd);
  for (size_t i = 0; i < ARRAY_SIZE (ns_links); i++)
    {
      if (!(x->join_flags & ns_links[i].flag))
        continue;
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/ns/%s", (int) x->init_pid, ns_links[i].name);
      n.fd[i] = open (path, O_RDONLY | O_CLOEXEC);
      if (n.fd[i] < 0)
        return sr_fail (err, errno, "open %s", path);
    }
  if (!sr_init_alive (x->init_pid, x->init_start_time))
    return sr_fail (err, ESRCH, "the container's init exited");
  for (size_t i = 0; i < ARRAY_SIZE (ns_links); i++)
    if (n.fd[i] >= 0 && setns (n.fd[i], ns_links[i].flag) < 0)
      return sr_fail (err, errno, "join the %s namespace", ns_links[i].name);
  return 0;
}

static int
join_namespaces (const struct sr_exec_child *x, sr_error **err)
{
  if (x->join_flags == 0)
    return 0;
  /* All at once, from the pidfd: no path the container could swap. */
  if (x->init_pidfd >= 0 && setns (x->init_pidfd, x->join_flags) == 0)
    return 0;
  if (x->init_pidfd >= 0 && errno != EINVAL)
    return sr_fail (err, errno, "join the namespaces of the container's init");
  return join_by_path (x, err);
}

/* The pid and time namespaces apply to children only: fork the process
 * into them, a child of the runtime (CLONE_PARENT) so that it can wait for
 * it.  The parent learns the process's pid either way. */
static int
fork_if_needed (const struct sr_exec_child *x, int sync, sr_error **err)
{
  if (!(x->join_flags & (CLONE_NEWPID | CLONE_NEWTIME)))
    return sr_sync_send (sync, SR_SYNC_PID, getpid (), NULL, err);
  return sr_init_fork_sibling (sync, "the process into the container's pid namespace", err);
}

/* ---- the child ----------------------------------------------------------- */

static bool
is_kept (int fd, const int *keep, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (keep[i] == fd)
      return true;
  return false;
}

/* Only the sync socket, the console socket and the init's pidfd stay, and
 * the preserved fds, the caller's.  A caller's fd reached us through an
 * execve, so it is not close-on-exec: one that is in the preserved range
 * is the runtime's own (the caller's numbering left a hole there), a cgroup
 * or state directory maybe, and goes too. */
static void
close_host_fds (struct sr_exec_child *x, int sync)
{
  struct sr_spawn_ctx *s = &x->spawn;
  int keep[] = { sync, s->console_socket, x->init_pidfd };

  sr_procfs_reset ();
  for (int fd = 3; fd < 3 + s->preserve_fds; fd++)
    {
      int flags = fcntl (fd, F_GETFD);
      if (flags >= 0 && (flags & FD_CLOEXEC) && !is_kept (fd, keep, ARRAY_SIZE (keep)))
        close (fd);
    }
  sr_close_fds_except (3 + s->preserve_fds, keep, ARRAY_SIZE (keep));
}

static int
enter_container (struct sr_exec_child *x, int sync, sr_error **err)
{
  if (sr_sync_expect_step (sync, SR_STEP_CGROUP_DONE, err) < 0)
    return -1;
  if (join_namespaces (x, err) < 0)
    return -1;
  sr_close (x->init_pidfd);
  x->init_pidfd = -1;
  if ((x->join_flags & CLONE_NEWUSER) && sr_init_become_root (err) < 0)
    return -1;
  if (fork_if_needed (x, sync, err) < 0)
    return -1;
  /* Now /proc and / are the container's.  setns has put us at the root of
   * its mount namespace already; say so, before any cwd is looked up. */
  sr_procfs_reset ();
  if (chdir ("/") < 0)
    return sr_fail (err, errno, "chdir to the container's root");
  return 0;
}

static int
exec_run (struct sr_exec_child *x, int sync, sr_error **err)
{
  struct sr_spawn_ctx *s = &x->spawn;
  const oci_process *p = s->cfg->process;
  _cleanup_free_ char *exe = NULL;
  _cleanup_strv_ char **env = NULL;

  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  sr_environ_wipe ();
  sr_signals_reset (s->ignored_signals);
  close_host_fds (x, sync);
  if (sr_exec_cpu_affinity_initial (p->exec_cpu_affinity, err) < 0)
    return -1;
  if (enter_container (x, sync, err) < 0)
    return -1;
  sr_cpu_affinity_reset (p->exec_cpu_affinity);
  /* Not the runtime's session keyring: the container's, as runc's exec. */
  if (sr_init_join_session_keyring (s->id, err) < 0
      || sr_init_setup_process (s, false, err) < 0)
    return -1;
  exe = sr_process_find_executable (p, err);
  if (exe == NULL)
    return -1;
  env = sr_process_env (p);
  if (sr_fds_cloexec_from (3 + s->preserve_fds, err) < 0)
    return -1;
  if (sr_exec_cpu_affinity_final (p->exec_cpu_affinity, err) < 0)
    return -1;
  if (s->want_notify_fd && sr_init_receive_listener (s, sync, err) < 0)
    return -1;
  /* The parent takes the sync socket closing at execve (close-on-exec) as
   * the success; an error after READY still reaches it. */
  if (sr_sync_send (sync, SR_SYNC_STEP, SR_STEP_READY, NULL, err) < 0)
    return -1;
  return sr_init_exec (s, exe, env, err);
}

void
sr_exec_child_main (struct sr_spawn_ctx *spawn, int sync_fd)
{
  struct sr_exec_child *x = (struct sr_exec_child *) spawn;
  sr_error *err = NULL;

  sr_log_set_forward_fd (sync_fd);
  exec_run (x, sync_fd, &err);
  sr_sync_die (sync_fd, err);
}
