/* `sandrun sandbox`, one execution (see sandbox.h): bundle → policy →
 * create → supervise → stats, files → receipt → delete, in that order, and
 * every resource released in one place whatever happened. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "oci-spec/oci-spec.h"
#include "bundle.h"
#include "egress.h"
#include "files.h"
#include "policy.h"
#include "receipt.h"
#include "sandbox.h"
#include "stats.h"
#include "supervisor.h"
#include "watchdog.h"
#include "sandrun/container.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

/* Everything one execution holds. */
struct sb_exec
{
  const struct sr_globals *g;
  const struct sb_options *o;
  struct sb_bundle b;
  oci_config *cfg;
  struct sb_watchdog wd;
  struct sb_supervisor sv;
  struct sb_files before, changes;
  struct sb_outcome res;
  struct sb_receipt rc;
  struct sb_egress eg;
  int stdin_fd;
  int out_w, err_w;
  bool created;
  unsigned samples;
  sigset_t old_mask;
  bool masked;
};

static void
exec_release (struct sb_exec *x)
{
  if (x->sv.pidfd >= 0 && x->created)
    syscall (SYS_pidfd_send_signal, x->sv.pidfd, SIGKILL, NULL, 0);
  if (x->created)
    {
      _cleanup_error_ sr_error *err = NULL;
      if (sr_container_delete (x->g, x->b.id, true, &err) < 0
          && sr_error_errno (err) != ENOENT)
        sr_log (SR_LOG_WARNING, "sandbox \"%s\": delete: %s", x->b.id,
                err->msg);
    }
  sb_egress_clear (&x->eg);
  sb_bundle_destroy (&x->b);
  sb_watchdog_stop (&x->wd);
  if (x->cfg != NULL)
    oci_config_free (x->cfg);
  sb_files_clear (&x->before);
  sb_files_clear (&x->changes);
  sb_supervisor_clear (&x->sv);
  sr_close (x->out_w);
  sr_close (x->err_w);
  if (x->stdin_fd > 0)
    sr_close (x->stdin_fd);
  sb_receipt_clear (&x->rc);
  free (x->res.start_error);
  if (x->masked)
    sigprocmask (SIG_SETMASK, &x->old_mask, NULL);
}

static int
make_pipes (struct sb_exec *x, sr_error **err)
{
  int p[2];
  bool to_caller = !x->o->quiet && !str_eq (x->o->receipt, "-");

  if (pipe2 (p, O_CLOEXEC) < 0)
    return sr_fail (err, errno, "pipe");
  x->sv.out.fd = p[0];
  x->out_w = p[1];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return sr_fail (err, errno, "pipe");
  x->sv.err.fd = p[0];
  x->err_w = p[1];
  x->sv.out.copy_to = to_caller ? 1 : -1;
  x->sv.err.copy_to = to_caller ? 2 : -1;
  if (x->o->stdin_file != NULL)
    {
      x->stdin_fd = open (x->o->stdin_file, O_RDONLY | O_CLOEXEC);
      if (x->stdin_fd < 0)
        return sr_fail (err, errno, "--stdin \"%s\"", x->o->stdin_file);
    }
  return 0;
}

/* Every this many samples, the growth of a --workdir is measured. */
#define WORKDIR_EVERY 2

/* The largest number of processes seen so far; and a --workdir's growth,
 * which no file system limit bounds: past --disk the run is stopped. */
static bool
sample (void *arg)
{
  struct sb_exec *x = arg;
  sb_stats_sample_pids (x->g, x->b.id, &x->rc.usage);
  if (x->b.ephemeral_work || ++x->samples % WORKDIR_EVERY != 0)
    return false;
  if (sb_files_growth (x->b.work, &x->before) < x->o->disk)
    return false;
  x->rc.usage.work_full = true;
  x->rc.usage.workdir_stopped = true;
  return true;
}

static int
prepare (struct sb_exec *x, sr_error **err)
{
  sigset_t set;

  if (sb_bundle_create (x->g, x->o, &x->b, err) < 0)
    return -1;
  if (sb_egress_wanted (x->o)
      && sb_egress_start_for (x->o, &x->b, &x->eg, err) < 0)
    return -1;
  x->cfg = sb_policy_config (x->o, &x->b, err);
  if (x->cfg == NULL)
    return -1;
  if (!x->b.ephemeral_work
      && sb_files_snapshot (x->b.work, &x->before, err) < 0)
    return -1;
  if (make_pipes (x, err) < 0)
    return -1;
  sb_supervisor_block_signals (&set, &x->old_mask);
  x->masked = true;
  x->sv.sigfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (x->sv.sigfd < 0)
    return sr_fail (err, errno, "signalfd");
  /* The init is our grandchild (the intermediate exits): we reap it. */
  if (prctl (PR_SET_CHILD_SUBREAPER, 1) < 0)
    return sr_fail (err, errno, "become a subreaper");
  return sb_watchdog_start (x->g, &x->b, &x->wd, err);
}

/* The --workdir's file system refused an idmapped mount: run again with the
 * sandbox user mapped onto the directory's owner (never onto root). */
static bool
retry_without_idmap (const struct sb_options *o, struct sb_bundle *b,
                     oci_config **cfg, sr_error **err)
{
  if (b->ephemeral_work || b->work_direct
      || strstr ((*err)->msg, "idmapped mount") == NULL)
    return false;
  if (b->work_uid == 0 || b->work_gid == 0)
    {
      sr_wrap (
          err,
          "--workdir \"%s\" is owned by root and its file system cannot be "
          "idmapped: give the sandbox a directory of an unprivileged user",
          o->workdir);
      return false;
    }
  sr_log (SR_LOG_DEBUG, "sandbox: %s; mapping the sandbox user to the owner",
          (*err)->msg);
  sr_error_free (*err);
  *err = NULL;
  b->work_direct = true;
  oci_config_free (*cfg);
  *cfg = sb_policy_config (o, b, err);
  return *cfg != NULL;
}

int
sb_container_create (const struct sr_globals *g, const struct sb_options *o,
                     struct sb_bundle *b, oci_config **cfg, const int stdio[3],
                     pid_t *pid, int *pidfd, sr_error **err)
{
  struct sr_create_opts opts = {
    .bundle = b->dir,
    .config = *cfg,
    .rootfs = b->rootfs,
    .start_now = true,
    .detach = true,
    .stdio = { stdio[0], stdio[1], stdio[2] },
    .set_stdio = true,
    .init_pid = pid,
    .init_pidfd = pidfd,
  };
  int status = 0;

  /* A create that fails undoes what it made itself. */
  if (sr_container_create (g, b->id, &opts, &status, err) == 0)
    return 0;
  if (!retry_without_idmap (o, b, cfg, err))
    return -1;
  opts.config = *cfg;
  return sr_container_create (g, b->id, &opts, &status, err);
}

static int
create (struct sb_exec *x, sr_error **err)
{
  int stdio[3] = { x->stdin_fd, x->out_w, x->err_w };

  x->rc.started_at = sr_now_rfc3339 ();
  x->sv.started_ms = sr_monotonic_ms ();
  if (sb_container_create (x->g, x->o, &x->b, &x->cfg, stdio, &x->sv.pid,
                           &x->sv.pidfd, err)
      < 0)
    return -1;
  x->created = true;
  sb_watchdog_arm (&x->wd, x->sv.pid);
  sr_close (x->out_w);
  sr_close (x->err_w);
  x->out_w = x->err_w = -1;
  return 0;
}

static void
measure (struct sb_exec *x)
{
  uint64_t used, avail;
  _cleanup_error_ sr_error *err = NULL;

  if (sb_fs_usage (x->b.tmp, &used, &avail) == 0 && avail < 64 * 1024)
    x->rc.usage.tmp_full = true;
  if (x->b.ephemeral_work && sb_fs_usage (x->b.work, &used, &avail) == 0
      && avail < 64 * 1024)
    x->rc.usage.work_full = true;
  if (!x->b.ephemeral_work && x->o->disk > 0)
    {
      /* A --workdir: the growth of what the run wrote. */
      if (sb_files_growth (x->b.work, &x->before) >= x->o->disk)
        x->rc.usage.work_full = true;
      if (sb_files_diff (x->b.work, &x->before, &x->changes, &err) < 0)
        sr_log (SR_LOG_WARNING, "sandbox: %s", err->msg);
      return;
    }
  if (sb_files_diff (x->b.work, &x->before, &x->changes, &err) < 0)
    sr_log (SR_LOG_WARNING, "sandbox: %s", err->msg);
}

static int
write_outputs (struct sb_exec *x, sr_error **err)
{
  const struct sb_options *o = x->o;

  if (o->collect != NULL
      && sb_files_collect (x->b.work, &x->changes, o->collect, err) < 0)
    return -1;
  return sb_receipt_emit (&x->rc, o, err);
}

static bool
start_failed (struct sb_exec *x, sr_error **err)
{
  if (!sb_outcome_start_failed (&x->res, x->sv.started_ms, err))
    return false;
  fprintf (stderr, "sandrun: sandbox: %s\n", x->res.start_error);
  return true;
}

int
sb_run (const struct sr_globals *g, const struct sb_options *o, int *status,
        sr_error **err)
{
  __attribute__ ((cleanup (exec_release))) struct sb_exec x = {
    .g = g,
    .o = o,
    .b = SB_BUNDLE_INIT,
    .wd = SB_WATCHDOG_INIT,
    .sv = { .o = o,
            .pidfd = -1,
            .sigfd = -1,
            .out = { .fd = -1 },
            .err = { .fd = -1 } },
    .stdin_fd = 0,
    .out_w = -1,
    .err_w = -1,
    .eg = SB_EGRESS_INIT,
  };

  x.sv.sample = sample;
  x.sv.sample_arg = &x;
  if (prepare (&x, err) < 0)
    return -1;
  if (create (&x, err) == 0)
    {
      sb_supervise (&x.sv, &x.res);
      sb_stats_collect (g, x.b.id, &x.rc.usage);
      sb_supervisor_reap (&x.sv, &x.res);
    }
  else if (!start_failed (&x, err))
    return -1;
  sb_egress_stop (&x.eg);
  x.rc.finished_at = sr_now_rfc3339 ();
  measure (&x);
  sb_receipt_set (&x.rc, o, &x.b, &x.sv, &x.res, &x.changes);
  x.rc.egress = &x.eg;
  sb_receipt_judge (&x.rc);
  *status = sb_outcome_status (&x.res);
  return write_outputs (&x, err);
}
