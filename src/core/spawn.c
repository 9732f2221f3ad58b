#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/sched.h>

#include "core/spawn.h"
#include "core/sync.h"
#include "sandrun/util.h"

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

static bool
hooks_present (const oci_hook_list *l)
{
  return l != NULL && l->len > 0;
}

void
sr_spawn_plan_steps (struct sr_spawn_ctx *ctx)
{
  const oci_hooks *h = ctx->cfg->hooks;

  ctx->want_idmap = (ctx->ns.new_flags & CLONE_NEWUSER) != 0;
  ctx->want_timens = ctx->ns.time_offsets;
  ctx->want_hooks = h != NULL && (hooks_present (&h->prestart) || hooks_present (&h->create_runtime));
  ctx->want_state_data = h != NULL && (hooks_present (&h->create_container)
                                       || hooks_present (&h->start_container));
  /* The same test as exec's: the filter makes a listener fd exactly then. */
  ctx->want_notify_fd = sr_seccomp_prog_uses_notify (ctx->seccomp);
  /* With a user namespace, also the binds the container's root could not
   * reach (idmap.c). */
  ctx->want_mount_fds = sr_idmap_wanted (ctx->cfg) || ctx->want_idmap;
}

/* fork()-like clone3: the child continues on a copy of this stack. */
static pid_t
clone3_child (uint64_t flags, int cgroup_fd, int *pidfd)
{
  struct clone_args args;

  memset (&args, 0, sizeof args);
  args.flags = flags | CLONE_PIDFD;
  args.pidfd = (uint64_t) (uintptr_t) pidfd;
  args.exit_signal = SIGCHLD;
  if (cgroup_fd >= 0)
    {
      args.flags |= CLONE_INTO_CGROUP;
      args.cgroup = (uint64_t) cgroup_fd;
    }
  return (pid_t) syscall (SYS_clone3, &args, sizeof args);
}

static pid_t
clone_child (uint64_t flags, int cgroup_fd, int *pidfd, bool *into)
{
  pid_t pid = clone3_child (flags, cgroup_fd, pidfd);
  *into = pid >= 0 && cgroup_fd >= 0;
  /* A cgroup that refuses CLONE_INTO_CGROUP: sr_cgroup_enter moves the
   * child right after instead. */
  if (pid < 0 && cgroup_fd >= 0 && errno != ENOSYS)
    pid = clone3_child (flags, -1, pidfd);
  if (pid < 0 && errno == ENOSYS)
    {
      *pidfd = -1;
      pid = (pid_t) syscall (SYS_clone, (unsigned long) flags | SIGCHLD, NULL, NULL, NULL, 0);
    }
  return pid;
}

/* SigIgn of /proc/self/status: one read instead of a sigaction per signal
 * in the init. */
static uint64_t
ignored_signals (void)
{
  _cleanup_free_ char *status = NULL;
  if (sr_read_file_at (AT_FDCWD, "/proc/self/status", 1 << 16, &status, NULL, NULL) < 0)
    return ~UINT64_C (0); /* unknown: reset them all */
  const char *p = strstr (status, "\nSigIgn:");
  return p != NULL ? strtoull (p + 8, NULL, 16) : ~UINT64_C (0);
}

/* The child's first act: into its v1 cgroups by itself (see
 * sr_cgroup_join_open), then it tells which moves worked (a bit per
 * hierarchy); the parent's sr_cgroup_enter makes the others. */
static void
join_cgroups (int *join, size_t n, int sync_fd)
{
  uint64_t done = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (join[i] >= 0 && write (join[i], "0", 1) == 1)
        done |= UINT64_C (1) << i;
      sr_close (join[i]);
      join[i] = -1;
    }
  if (n > 0)
    {
      char text[24];
      snprintf (text, sizeof text, "%" PRIx64, done);
      sr_sync_send (sync_fd, SR_SYNC_STEP, SR_STEP_CGROUP_JOINED, text, NULL);
    }
}

/* The parent's side: which hierarchies the child is in already. */
static int
receive_joined (struct sr_spawn_ctx *ctx, bool into, size_t njoin,
                sr_error **err)
{
  struct sr_sync_msg msg;
  ctx->cg_joined = into ? sr_cgroup_clone_bit (ctx->cg) : 0;
  if (njoin == 0)
    return 0;
  if (sr_sync_expect_step_msg (ctx->sync_fd, SR_STEP_CGROUP_JOINED, &msg, err)
      < 0)
    return -1;
  ctx->cg_joined |= strtoull (msg.text, NULL, 16);
  return 0;
}

int
sr_spawn_clone (struct sr_spawn_ctx *ctx, sr_error **err)
{
  int sv[2];
  /* Namespaces joined by path must be entered before a new user namespace
   * exists, and time offsets written before the namespace is entered: the
   * child does that itself (two_step); otherwise one clone makes them all.
   * The cgroup namespace is always unshared by the init once it sits in
   * its cgroup, so that the namespace root is the container's cgroup. */
  uint64_t flags = ctx->ns.two_step ? 0 : (uint64_t) (ctx->ns.new_flags & ~CLONE_NEWCGROUP);

  if (ctx->want_mount_fds
      && sr_idmap_mounts_open (ctx->cfg, ctx->bundle, &ctx->ns, &ctx->mount_fds, err) < 0)
    return -1;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    {
      sr_mount_fds_close (&ctx->mount_fds);
      return sr_fail (err, errno, "create sync socket");
    }

  ctx->ignored_signals = ignored_signals ();
  int cgroup_fd = ctx->cg != NULL ? sr_cgroup_clone_fd (ctx->cg) : -1;
  int join[64];
  size_t njoin = sr_cgroup_join_open (ctx->cg, join, ARRAY_SIZE (join));
  int pidfd = -1;
  bool into = false;
  pid_t pid = clone_child (flags, cgroup_fd, &pidfd, &into);
  if (pid == 0)
    join_cgroups (join, njoin, sv[1]);
  for (size_t i = 0; i < njoin; i++)
    sr_close (join[i]);
  if (pid != 0)
    sr_mount_fds_close (&ctx->mount_fds); /* the init has its copies */
  if (pid < 0)
    {
      int saved = errno;
      sr_close (sv[0]);
      sr_close (sv[1]);
      return sr_fail (err, saved, "clone the container init");
    }
  if (pid == 0)
    {
      sr_close (sv[0]);
      if (ctx->child_main != NULL)
        ctx->child_main (ctx, sv[1]);
      sr_init_main (ctx, sv[1]);
    }
  sr_close (sv[1]);
  ctx->sync_fd = sv[0];
  ctx->clone_pid = pid;
  ctx->pid = ctx->ns.two_step ? 0 : pid;
  ctx->pidfd = pidfd;
  if (ctx->ns.two_step)
    {
      /* That is the intermediate; the init's pidfd comes with its pid. */
      sr_close (pidfd);
      ctx->pidfd = -1;
    }
  return receive_joined (ctx, into, njoin, err);
}
