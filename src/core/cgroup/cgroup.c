/* The cgroup interface: one sr_cgroup holds the container's directory in
 * every hierarchy of the host, whatever the layout (v1, hybrid, v2). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "internal.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

/* Rounds of signalling while the cgroup keeps processes after SIGKILL and
 * nothing could freeze it (each round 10 ms apart). */
#define KILL_ROUNDS 100

int
sr_cgroup_detect (sr_cgroup_layout *layout, sr_error **err)
{
  static sr_cgroup_layout cached;
  if (cached != 0)
    {
      *layout = cached;
      return 0;
    }
  struct statfs st;
  if (statfs ("/sys/fs/cgroup", &st) < 0)
    return sr_fail (err, errno, "cgroup: statfs \"/sys/fs/cgroup\"");
  if (st.f_type == CGROUP2_SUPER_MAGIC)
    cached = SR_CGROUP_V2;
  else if (st.f_type == TMPFS_MAGIC)
    {
      bool unified = statfs ("/sys/fs/cgroup/unified", &st) == 0
                     && st.f_type == CGROUP2_SUPER_MAGIC;
      cached = unified ? SR_CGROUP_HYBRID : SR_CGROUP_V1;
    }
  else
    return sr_fail (err, ENOTSUP,
                    "cgroup: /sys/fs/cgroup is neither cgroup2 nor tmpfs");
  *layout = cached;
  return 0;
}

void
sr_cgroup_free (sr_cgroup *cg)
{
  if (cg == NULL)
    return;
  for (size_t i = 0; i < cg->n; i++)
    sr_cg_hier_clear (&cg->h[i]);
  free (cg->h);
  free (cg->record);
  sr_cg_systemd_free (cg->sd);
  free (cg);
}

void
sr_cgroup_freep (sr_cgroup **cg)
{
  sr_cgroup_free (*cg);
  *cg = NULL;
}

sr_cgroup *
sr_cg_discover (sr_error **err)
{
  sr_cgroup_layout layout;
  if (sr_cgroup_detect (&layout, err) < 0)
    return NULL;
  sr_cgroup *cg = xcalloc (1, sizeof *cg);
  cg->layout = layout;
  if (sr_cg_hier_discover (layout, &cg->h, &cg->n, err) < 0)
    {
      free (cg);
      return NULL;
    }
  return cg;
}

static sr_cg_prepare_fn
prepare_fn (const struct sr_cg_hier *h)
{
  if (h->v2)
    return sr_cg_v2_prepare;
  if (h->ctrls & SR_CG_BIT (SR_CG_CPUSET))
    return sr_cg_v1_prepare_cpuset;
  return NULL;
}

/* Undo a failed create: only what this process made goes. */
static void
undo_create (sr_cgroup *cg)
{
  for (size_t i = 0; i < cg->n; i++)
    {
      sr_error *e = NULL;
      if (sr_cg_remove_path (&cg->h[i], true, &e) < 0)
        sr_warn ("%s", e->msg);
      sr_error_free (e);
    }
}

/* Reusing an existing cgroup is fine, and so is joining processes that are
 * already in it (runc warns and joins: some engines prepare the cgroup);
 * such a cgroup is marked shared, so that delete kills only the
 * container's own processes and leaves the cgroup. */
static int
check_unused (sr_cgroup *cg, sr_error **err)
{
  struct sr_cg_hier *h = sr_cg_primary (cg);
  if (h->created > 0)
    return 0;
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  if (sr_cg_collect_pids (h->fd, &pids, &n, err) < 0)
    return -1;
  if (n > 0)
    {
      sr_warn ("cgroup \"%s%s\" already has %zu process(es): joining it",
               h->mnt, h->path, n);
      cg->shared = true;
    }
  return 0;
}

/* A frozen cgroup (or one under a frozen parent) would hold the init
 * before it reports back, and create would wait forever: refused, as
 * runc refuses it. */
static int
check_not_frozen (const sr_cgroup *cg, sr_error **err)
{
  bool frozen = false;
  if (sr_cgroup_frozen (cg, &frozen, err) < 0)
    return -1;
  if (frozen)
    return sr_fail (err, EBUSY, "cgroup \"%s\" is frozen", cg->record);
  return 0;
}

/* On cgroup2, what the container's cgroup can use is what its parent
 * passes down, which may be less than the root has. */
static int
leaf_controllers (struct sr_cg_hier *h, sr_error **err)
{
  if (!h->v2 || h->fd < 0)
    return 0;
  _cleanup_free_ char *list = NULL;
  if (sr_cg_read (h->fd, "cgroup.controllers", &list, err) < 0)
    return -1;
  h->ctrls = sr_cg_ctrls_parse (list, " ", true);
  return 0;
}

/* Each hierarchy's path and the record that names them all. */
static int
resolve_paths (sr_cgroup *cg, const char *normalized, sr_error **err)
{
  for (size_t i = 0; i < cg->n; i++)
    {
      struct sr_cg_hier *h = &cg->h[i];
      h->path = sr_cg_resolve (h->own, h->v2, normalized);
      if (strchr (h->path, ';') != NULL)
        return sr_fail (err, EINVAL, "cgroup: unsupported path \"%s\"",
                        h->path);
    }
  cg->record = sr_cg_record_format (cg->h, cg->n);
  return 0;
}

char *
sr_cgroup_plan_path (const char *id, const char *cgroups_path, sr_error **err)
{
  _cleanup_free_ char *normalized = NULL;
  if (sr_cg_normalize (id, cgroups_path, &normalized, err) < 0)
    return NULL;
  _cleanup_cgroup_ sr_cgroup *cg = sr_cg_discover (err);
  if (cg == NULL || resolve_paths (cg, normalized, err) < 0)
    return NULL;
  return steal_pointer (&cg->record);
}

/* What the cgroup2 walk enables in the parents: on pure v2 every
 * controller (as runc and crun do); on a hybrid host only those the
 * resources need, since enabling one in the cgroup2 root takes it from
 * cgroup v1 for the whole host (docs/cgroups.md). */
static void
plan_enable (sr_cgroup *cg, const oci_resources *res)
{
  unsigned need = sr_cg_requested_ctrls (res);
  for (size_t i = 0; i < cg->n; i++)
    cg->h[i].enable = !cg->h[i].v2 ? 0
                      : cg->layout == SR_CGROUP_V2 ? ~0u
                                                   : need;
}

static int
create_dirs (sr_cgroup *cg, const char *normalized, bool must_be_unused,
             const oci_resources *res, sr_error **err)
{
  if (resolve_paths (cg, normalized, err) < 0)
    return -1;
  plan_enable (cg, res);
  for (size_t i = 0; i < cg->n; i++)
    if (sr_cg_mkdir_path (&cg->h[i], prepare_fn (&cg->h[i]), err) < 0
        || leaf_controllers (&cg->h[i], err) < 0)
      return -1;
  if (check_not_frozen (cg, err) < 0)
    return -1;
  return must_be_unused ? check_unused (cg, err) : 0;
}

int
sr_cg_realize (sr_cgroup *cg, const char *normalized, bool must_be_unused,
               const oci_resources *res, const oci_device *devices,
               size_t devices_len, sr_error **err)
{
  if (create_dirs (cg, normalized, must_be_unused, res, err) < 0
      || sr_cg_apply_resources (cg, res, err) < 0
      || sr_cg_apply_devices (cg, res, devices, devices_len, err) < 0)
    {
      undo_create (cg);
      return -1;
    }
  return 0;
}

int
sr_cgroup_create_with_devices (const char *id, const char *cgroups_path,
                               const oci_resources *res,
                               const oci_device *devices, size_t devices_len,
                               sr_cgroup **out, sr_error **err)
{
  _cleanup_free_ char *normalized = NULL;
  if (sr_cg_normalize (id, cgroups_path, &normalized, err) < 0)
    return -1;
  _cleanup_cgroup_ sr_cgroup *cg = sr_cg_discover (err);
  if (cg == NULL)
    return -1;
  cg->from_create = true;
  if (sr_cg_realize (cg, normalized, true, res, devices, devices_len, err) < 0)
    return -1;
  sr_debug ("cgroup: created \"%s\"", cg->record);
  *out = steal_pointer (&cg);
  return 0;
}

int
sr_cgroup_create (const char *id, const char *cgroups_path,
                  const oci_resources *res, sr_cgroup **out, sr_error **err)
{
  return sr_cgroup_create_with_devices (id, cgroups_path, res, NULL, 0, out,
                                        err);
}

int
sr_cgroup_open (const char *recorded_path, sr_cgroup **out, sr_error **err)
{
  _cleanup_cgroup_ sr_cgroup *cg = sr_cg_discover (err);
  if (cg == NULL)
    return -1;
  cg->record = xstrdup (recorded_path ? recorded_path : "");
  for (size_t i = 0; i < cg->n; i++)
    {
      struct sr_cg_hier *h = &cg->h[i];
      if (sr_cg_record_lookup (recorded_path, h->key, &h->path, err) < 0
          || sr_cg_open_path (h, err) < 0 || leaf_controllers (h, err) < 0)
        return -1;
    }
  if (sr_cg_systemd_attach (cg, err) < 0)
    return -1;
  *out = steal_pointer (&cg);
  return 0;
}

bool
sr_cgroup_shared (const sr_cgroup *cg)
{
  return cg->shared;
}

const char *
sr_cgroup_path (const sr_cgroup *cg)
{
  return cg->record;
}

int
sr_cgroup_clone_fd (const sr_cgroup *cg)
{
  const struct sr_cg_hier *h = sr_cg_unified (cg);
  return h != NULL ? h->fd : -1;
}

static int
require_dir (const struct sr_cg_hier *h, sr_error **err)
{
  if (h->fd < 0)
    return sr_fail (err, ENOENT, "cgroup \"%s%s\"", h->mnt, h->path);
  return 0;
}

size_t
sr_cgroup_join_open (const sr_cgroup *cg, int *fds, size_t max)
{
  bool any = false;
  if (cg == NULL || cg->sd != NULL || cg->n > max)
    return 0;
  for (size_t i = 0; i < cg->n; i++)
    {
      const struct sr_cg_hier *h = &cg->h[i];
      fds[i] = -1;
      if (!h->v2 && h->fd >= 0)
        fds[i] = openat (h->fd, "tasks", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
      any = any || fds[i] >= 0;
    }
  return any ? cg->n : 0;
}

uint64_t
sr_cgroup_clone_bit (const sr_cgroup *cg)
{
  for (size_t i = 0; i < cg->n && i < 64; i++)
    if (cg->h[i].v2)
      return UINT64_C (1) << i;
  return 0;
}

int
sr_cgroup_enter (sr_cgroup *cg, pid_t pid, uint64_t joined, sr_error **err)
{
  if (sr_cg_systemd_enter (cg, pid, err) < 0)
    return -1;
  for (size_t i = 0; i < cg->n; i++)
    {
      const struct sr_cg_hier *h = &cg->h[i];
      if (require_dir (h, err) < 0)
        return -1;
      /* Cloned into it, or moved itself (sr_cgroup_join_open): writing the
       * pid would take the global lock that the child avoided. */
      if (i < 64 && (joined & (UINT64_C (1) << i)))
        continue;
      if (sr_cg_writef (h->fd, "cgroup.procs", err, "%d", (int) pid) < 0)
        return sr_wrap (err, "cgroup %s \"%s\"", sr_cg_hier_name (h), h->path);
    }
  return 0;
}

/* An update may need a cgroup2 controller that the create did not enable
 * (hybrid host): enable it along the existing path now. */
static int
enable_missing (sr_cgroup *cg, const oci_resources *res, sr_error **err)
{
  struct sr_cg_hier *h = sr_cg_unified (cg);
  if (cg->layout != SR_CGROUP_HYBRID || h == NULL || h->fd < 0)
    return 0;
  unsigned need = sr_cg_requested_ctrls (res) & ~h->ctrls;
  for (size_t i = 0; i < cg->n; i++)
    if (&cg->h[i] != h)
      need &= ~cg->h[i].ctrls; /* v1 carries it */
  if (need == 0)
    return 0;
  h->enable = need;
  size_t created = h->created;
  int r = sr_cg_mkdir_path (h, sr_cg_v2_prepare, err);
  h->created = created;
  return r < 0 ? -1 : leaf_controllers (h, err);
}

int
sr_cgroup_apply (sr_cgroup *cg, const oci_resources *res, sr_error **err)
{
  if (enable_missing (cg, res, err) < 0
      || sr_cg_systemd_apply (cg, res, err) < 0
      || sr_cg_apply_resources (cg, res, err) < 0)
    return -1;
  if (res != NULL && res->devices_len > 0)
    return sr_cg_apply_devices (cg, res, NULL, 0, err);
  return 0;
}

int
sr_cgroup_pids (const sr_cgroup *cg, pid_t **pids, size_t *n, sr_error **err)
{
  const struct sr_cg_hier *h = sr_cg_primary (cg);
  *pids = NULL;
  *n = 0;
  if (h->fd < 0)
    return 0;
  if (sr_cg_collect_pids (h->fd, pids, n, err) < 0)
    {
      free (*pids);
      *pids = NULL;
      *n = 0;
      return -1;
    }
  return 0;
}

/* The hierarchy whose freezer acts on the container: v1's freezer
 * controller where mounted, else cgroup2's built-in one. */
static const struct sr_cg_hier *
freezer_hier (const sr_cgroup *cg)
{
  const struct sr_cg_hier *h = sr_cg_find (cg, SR_CG_FREEZER);
  return h != NULL ? h : sr_cg_unified (cg);
}

int
sr_cgroup_freeze (const sr_cgroup *cg, bool frozen, sr_error **err)
{
  const struct sr_cg_hier *h = freezer_hier (cg);
  if (h == NULL)
    return sr_fail (err, ENOTSUP, "cgroup: no freezer is available");
  if (require_dir (h, err) < 0)
    return -1;
  int r = h->v2 ? sr_cg_v2_freeze (h->fd, frozen, err)
                : sr_cg_v1_freeze (h->fd, frozen, err);
  return r < 0 ? sr_wrap (err, "cgroup \"%s%s\"", h->mnt, h->path) : 0;
}

int
sr_cgroup_frozen (const sr_cgroup *cg, bool *frozen, sr_error **err)
{
  const struct sr_cg_hier *h = freezer_hier (cg);
  *frozen = false;
  if (h == NULL || h->fd < 0)
    return 0;
  return h->v2 ? sr_cg_v2_is_frozen (h->fd, frozen, err)
               : sr_cg_v1_is_frozen (h->fd, frozen, err);
}

int
sr_cgroup_frozen_at (const char *recorded_path, bool *frozen, sr_error **err)
{
  *frozen = false;
  _cleanup_cgroup_ sr_cgroup *cg = sr_cg_discover (err);
  if (cg == NULL)
    return -1;
  cg->record = xstrdup (recorded_path);
  /* The freezer's hierarchy alone: a status check must not cost an open
   * of every hierarchy (each command loads the state at least once). */
  struct sr_cg_hier *h = (struct sr_cg_hier *) freezer_hier (cg);
  if (h == NULL)
    return 0;
  if (sr_cg_record_lookup (recorded_path, h->key, &h->path, err) < 0
      || sr_cg_open_path (h, err) < 0)
    return -1;
  return sr_cgroup_frozen (cg, frozen, err);
}

/* Signal every listed process once; *left is how many there were. */
static int
signal_pass (const sr_cgroup *cg, int signo, size_t *left, sr_error **err)
{
  _cleanup_free_ pid_t *pids = NULL;
  if (sr_cgroup_pids (cg, &pids, left, err) < 0)
    return -1;
  for (size_t i = 0; i < *left; i++)
    if (kill (pids[i], signo) < 0 && errno != ESRCH)
      return sr_fail (err, errno, "cgroup: kill %d", (int) pids[i]);
  return 0;
}

/* SIGKILL without cgroup.kill: freeze so that nothing forks between the
 * listing and the signals, then thaw so that the killed can exit (a task
 * frozen by v1 does not die).  Without a freezer, repeat until empty. */
static int
kill_all (const sr_cgroup *cg, sr_error **err)
{
  bool frozen = sr_cgroup_freeze (cg, true, NULL) == 0;
  size_t left = 0;
  if (signal_pass (cg, SIGKILL, &left, err) < 0)
    return -1;
  if (frozen)
    return sr_cgroup_freeze (cg, false, err);
  for (int round = 0; left > 0 && round < KILL_ROUNDS; round++)
    {
      sr_cg_nap (10);
      if (signal_pass (cg, SIGKILL, &left, err) < 0)
        return -1;
    }
  return 0;
}

int
sr_cgroup_kill (const sr_cgroup *cg, int signo, sr_error **err)
{
  if (sr_cg_primary (cg)->fd < 0)
    return 0;
  if (signo != SIGKILL)
    {
      size_t n;
      return signal_pass (cg, signo, &n, err);
    }
  const struct sr_cg_hier *u = sr_cg_unified (cg);
  int done = u != NULL && u->fd >= 0 ? sr_cg_v2_kill (u->fd, err) : 0;
  if (done < 0)
    return -1;
  if (done == 0)
    return kill_all (cg, err);
  /* A paused container must thaw for the killed tasks to exit (v1). */
  bool frozen = false;
  if (sr_cgroup_frozen (cg, &frozen, NULL) == 0 && frozen)
    return sr_cgroup_freeze (cg, false, err);
  return 0;
}

int
sr_cgroup_destroy (const sr_cgroup *cg, sr_error **err)
{
  int ret = 0;
  sr_cg_systemd_stop (cg);
  for (size_t i = 0; i < cg->n; i++)
    if (sr_cg_remove_path (&cg->h[i], cg->from_create, err) < 0)
      ret = -1; /* keep going: leave as little as possible behind */
  return ret;
}
