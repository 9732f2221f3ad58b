/* The container lifecycle after create: loading a container from the store,
 * its status (runtime.md), start, kill and delete. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "oci-spec/oci-spec.h"
#include "core/cgroup/cgroup.h"
#include "sandrun/container.h"
#include "core/hooks.h"
#include "core/lifecycle.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

#define EXEC_FIFO "exec.fifo"
#define SAVED_CONFIG "config.json"

static const char *const status_names[] = {
  [SR_STATUS_CREATING] = "creating", [SR_STATUS_CREATED] = "created",
  [SR_STATUS_RUNNING] = "running",   [SR_STATUS_PAUSED] = "paused",
  [SR_STATUS_STOPPED] = "stopped",
};

const char *
sr_status_name (sr_status s)
{
  return status_names[s];
}

/* Alive and still the process we started (not a recycled pid, not a
 * zombie). */
bool
sr_init_alive (pid_t pid, unsigned long long start_time)
{
  char state;
  unsigned long long started;

  if (pid <= 0 || sr_proc_stat (pid, &state, &started) < 0)
    return false;
  if (state == 'Z' || state == 'X')
    return false;
  return start_time == 0 || started == start_time;
}

sr_status
sr_container_status_now (const sr_container *c, const sr_cgroup *cg)
{
  if (!c->rec.created_done)
    return SR_STATUS_CREATING;
  if (!sr_init_alive (c->rec.pid, c->rec.start_time))
    return SR_STATUS_STOPPED;
  if (c->rec.cgroup_path != NULL)
    {
      bool frozen = false;
      int r = cg != NULL ? sr_cgroup_frozen (cg, &frozen, NULL)
                         : sr_cgroup_frozen_at (c->rec.cgroup_path, &frozen, NULL);
      if (r == 0 && frozen)
        return SR_STATUS_PAUSED;
    }
  if (faccessat (c->dirfd, EXEC_FIFO, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    return SR_STATUS_CREATED;
  return SR_STATUS_RUNNING;
}

int
sr_container_load (const struct sr_globals *g, const char *id, bool exclusive,
                   sr_container *c, sr_error **err)
{
  memset (c, 0, sizeof *c);
  c->dirfd = -1;
  c->store.root_fd = -1;
  if (sr_validate_id (id, err) < 0)
    return -1;
  if (sr_store_open (g->root, false, &c->store, err) < 0)
    {
      if (err != NULL && *err != NULL && (*err)->errnum == ENOENT)
        {
          sr_error_freep (err);
          return sr_fail_no_container (err, id);
        }
      return -1;
    }
  c->dirfd = sr_store_lock (&c->store, id, exclusive, err);
  if (c->dirfd < 0)
    return -1;
  if (sr_record_read (c->dirfd, &c->rec, err) < 0)
    return sr_wrap (err, "read state of container \"%s\"", id);
  c->status = sr_container_status_now (c, NULL);
  return 0;
}

void
sr_container_release (sr_container *c)
{
  sr_record_clear (&c->rec);
  if (c->cfg != NULL)
    oci_config_free (c->cfg);
  c->cfg = NULL;
  sr_close (c->dirfd);
  c->dirfd = -1;
  sr_store_close (&c->store);
}

const oci_config *
sr_container_config (sr_container *c, sr_error **err)
{
  _cleanup_free_ char *data = NULL;
  size_t len;

  if (c->cfg != NULL)
    return c->cfg;
  if (sr_read_file_at (c->dirfd, SAVED_CONFIG, OCI_MAX_DOCUMENT_SIZE, &data, &len, err) < 0)
    return NULL;
  c->cfg = oci_config_parse_data (data, len, err);
  return c->cfg;
}

char *
sr_container_state_json (sr_container *c)
{
  oci_state st = {
    .oci_version = (char *) OCI_SPEC_VERSION,
    .id = c->rec.id,
    .status = (char *) sr_status_name (c->status),
    .pid = c->status == SR_STATUS_STOPPED ? 0 : c->rec.pid,
    .bundle = c->rec.bundle,
    .annotations = c->rec.annotations,
    .rootfs = c->rec.rootfs,
    .created = c->rec.created,
    .owner = c->rec.owner,
  };
  return oci_state_to_json (&st);
}

/* ---- start --------------------------------------------------------------- */

/* The init holds the fifo's read end until execve (or its death): a writer
 * polls POLLERR once no reader is left.  Like runc's start, which reads the
 * fifo to EOF, this waits as long as the startContainer hooks take. */
static void
wait_for_exec (int fifo_fd)
{
  struct pollfd p = { .fd = fifo_fd, .events = 0 };
  while (poll (&p, 1, -1) < 0 && errno == EINTR)
    ;
}

int
sr_container_start (const struct sr_globals *g, const char *id, sr_error **err)
{
  _cleanup_container_ sr_container c = SR_CONTAINER_INIT;

  if (sr_container_load (g, id, true, &c, err) < 0)
    return sr_wrap (err, "start \"%s\"", id);
  if (c.status != SR_STATUS_CREATED)
    return sr_fail (err, 0, "start \"%s\": cannot start a container that is %s", id,
                    sr_status_name (c.status));

  /* A writer can only open the fifo while the init holds the read end. */
  _cleanup_close_ int fd = openat (c.dirfd, EXEC_FIFO, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return sr_fail (err, errno == ENXIO ? ESRCH : errno, "start \"%s\": open exec fifo", id);
  if (sr_write_all (fd, "0", 1) < 0)
    return sr_fail (err, errno, "start \"%s\": write exec fifo", id);
  unlinkat (c.dirfd, EXEC_FIFO, 0);
  wait_for_exec (fd);

  const oci_config *cfg = sr_container_config (&c, err);
  if (cfg == NULL)
    return sr_wrap (err, "start \"%s\"", id);
  if (cfg->hooks != NULL && cfg->hooks->poststart.len > 0)
    {
      c.status = SR_STATUS_RUNNING;
      _cleanup_free_ char *state = sr_container_state_json (&c);
      sr_hooks_run_warn (&cfg->hooks->poststart, "poststart", state, c.rec.bundle);
    }
  return 0;
}

/* ---- kill ---------------------------------------------------------------- */

static int
signal_init (const sr_record *rec, int signo, sr_error **err)
{
  int pidfd = (int) syscall (SYS_pidfd_open, rec->pid, 0);
  if (pidfd >= 0)
    {
      /* The pidfd pins the process: check it is still ours, then signal. */
      int r = 0;
      if (!sr_init_alive (rec->pid, rec->start_time))
        r = sr_fail (err, ESRCH, "signal the init");
      else if (syscall (SYS_pidfd_send_signal, pidfd, signo, NULL, 0) < 0)
        r = sr_fail (err, errno, "signal the init");
      sr_close (pidfd);
      return r;
    }
  if (errno != ENOSYS)
    return sr_fail (err, errno, "signal the init");
  if (kill (rec->pid, signo) < 0)
    return sr_fail (err, errno, "signal the init");
  return 0;
}

int
sr_container_kill (const struct sr_globals *g, const char *id, int signo, bool all,
                   sr_error **err)
{
  _cleanup_container_ sr_container c = SR_CONTAINER_INIT;

  if (sr_container_load (g, id, false, &c, err) < 0)
    return sr_wrap (err, "kill \"%s\"", id);
  if (c.status == SR_STATUS_STOPPED || (c.status == SR_STATUS_CREATING && c.rec.pid == 0))
    return sr_fail (err, 0, "kill \"%s\": container not running", id);
  if (all && c.rec.cgroup_path != NULL)
    {
      _cleanup_cgroup_ sr_cgroup *cg = NULL;
      if (sr_cgroup_open (c.rec.cgroup_path, &cg, err) < 0
          || sr_cgroup_kill (cg, signo, err) < 0)
        return sr_wrap (err, "kill \"%s\"", id);
      return 0;
    }
  if (signal_init (&c.rec, signo, err) < 0)
    return sr_wrap (err, "kill \"%s\"", id);
  /* v1's freezer holds even a SIGKILL until the thaw (runc thaws too). */
  if (signo == SIGKILL && c.status == SR_STATUS_PAUSED)
    {
      _cleanup_cgroup_ sr_cgroup *cg = NULL;
      if (sr_cgroup_open (c.rec.cgroup_path, &cg, NULL) == 0)
        sr_cgroup_freeze (cg, false, NULL);
    }
  return 0;
}

/* ---- delete -------------------------------------------------------------- */

/* Wait (bounded) for a process we are not the parent of to exit. */
static void
wait_gone (pid_t pid, unsigned long long start_time, int timeout_ms)
{
  int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (pidfd >= 0)
    {
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      while (poll (&p, 1, timeout_ms) < 0 && errno == EINTR)
        ;
      sr_close (pidfd);
      /* It may be a child of ours (run): reap it. */
      waitpid (pid, NULL, WNOHANG);
      return;
    }
  for (int waited = 0; waited < timeout_ms && sr_init_alive (pid, start_time); waited += 10)
    {
      struct timespec ts = { 0, 10 * 1000 * 1000 };
      nanosleep (&ts, NULL);
      waitpid (pid, NULL, WNOHANG);
    }
}

/* Once our init is gone, processes in the cgroup of a create that never
 * finished are not ours (it found the cgroup in use and failed). */
static bool
cgroup_in_use (const sr_cgroup *cg)
{
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  return sr_cgroup_pids (cg, &pids, &n, NULL) == 0 && n > 0;
}

/* Everything the container holds: its processes, its cgroup, its state.
 * Used by delete, by a failed create and by `run` at the end. */
int
sr_container_destroy (sr_container *c, const oci_config *cfg, sr_error **err)
{
  _cleanup_cgroup_ sr_cgroup *cg = NULL;

  /* A create that never finished may have recorded a cgroup it did not get
   * to make, and a shared cgroup holds others' processes: only the
   * container's own init is killed then (by pid, below), never whatever
   * else sits in that cgroup. */
  bool own_cgroup = c->rec.created_done && !c->rec.cgroup_shared;
  if (c->rec.cgroup_path != NULL && sr_cgroup_open (c->rec.cgroup_path, &cg, NULL) == 0
      && own_cgroup)
    {
      sr_cgroup_freeze (cg, false, NULL);
      sr_cgroup_kill (cg, SIGKILL, NULL);
    }
  if (c->rec.pid > 0 && sr_init_alive (c->rec.pid, c->rec.start_time))
    {
      signal_init (&c->rec, SIGKILL, NULL);
      wait_gone (c->rec.pid, c->rec.start_time, 5000);
    }
  if (cg != NULL && !own_cgroup && cgroup_in_use (cg))
    {
      sr_debug ("delete \"%s\": cgroup %s has processes of someone else: left alone",
                c->rec.id, c->rec.cgroup_path);
      sr_cgroup_free (steal_pointer (&cg));
    }
  if (cg != NULL && sr_cgroup_destroy (cg, err) < 0)
    return -1;
  if (cfg != NULL && cfg->hooks != NULL && cfg->hooks->poststop.len > 0)
    {
      c->status = SR_STATUS_STOPPED;
      _cleanup_free_ char *state = sr_container_state_json (c);
      sr_hooks_run_warn (&cfg->hooks->poststop, "poststop", state, c->rec.bundle);
    }
  return sr_store_remove (&c->store, c->rec.id, err);
}

int
sr_container_delete (const struct sr_globals *g, const char *id, bool force, sr_error **err)
{
  _cleanup_container_ sr_container c = SR_CONTAINER_INIT;
  _cleanup_error_ sr_error *cfg_err = NULL;

  if (sr_container_load (g, id, true, &c, err) < 0)
    {
      /* A create killed before its first record: only the directory. */
      if (force && err != NULL && *err != NULL && c.dirfd >= 0 && c.rec.id == NULL)
        {
          sr_error_freep (err);
          return sr_store_remove (&c.store, id, err) < 0 ? sr_wrap (err, "delete \"%s\"", id) : 0;
        }
      /* Engines' cleanup paths delete blindly: a container that is not
       * there is already deleted (runc and crun exit 0 too). */
      if (force && c.dirfd < 0 && sr_error_errno (*err) == ENOENT)
        {
          sr_error_freep (err);
          return 0;
        }
      return sr_wrap (err, "delete \"%s\"", id);
    }
  if (!force && (c.status == SR_STATUS_RUNNING || c.status == SR_STATUS_PAUSED))
    return sr_fail (err, 0, "delete \"%s\": cannot delete a container that is %s (use --force)",
                    id, sr_status_name (c.status));

  const oci_config *cfg = sr_container_config (&c, &cfg_err);
  if (cfg == NULL)
    sr_debug ("delete \"%s\": no saved config: %s", id, cfg_err ? cfg_err->msg : "?");
  if (sr_container_destroy (&c, cfg, err) < 0)
    return sr_wrap (err, "delete \"%s\"", id);
  return 0;
}

/* ---- ps ------------------------------------------------------------------ */

int
sr_container_pids (const struct sr_globals *g, const char *id, pid_t **pids, size_t *n,
                   sr_error **err)
{
  _cleanup_container_ sr_container c = SR_CONTAINER_INIT;
  _cleanup_cgroup_ sr_cgroup *cg = NULL;

  *pids = NULL;
  *n = 0;
  if (sr_container_load (g, id, false, &c, err) < 0)
    return sr_wrap (err, "ps \"%s\"", id);
  if (c.status == SR_STATUS_STOPPED || c.rec.cgroup_path == NULL)
    return 0;
  if (sr_cgroup_open (c.rec.cgroup_path, &cg, err) < 0 || sr_cgroup_pids (cg, pids, n, err) < 0)
    return sr_wrap (err, "ps \"%s\"", id);
  return 0;
}
