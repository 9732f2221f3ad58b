/* The systemd cgroup driver: a transient unit per container, then the
 * cgroupfs code on the unit's cgroup (as runc: systemd gets what it has
 * properties for, the files get everything). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "core/cgroup/cgroup_systemd.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

#define DRIVER "systemd cgroup driver"
/* 10 ms each: how long killed processes may take to leave the unit. */
#define EMPTY_WAIT_ROUNDS 200

struct sr_cg_systemd
{
  struct sr_sd_unit unit; /* only unit.name when opened from a record */
  sr_sd_bus *bus;         /* connected on first use */
  int version;            /* systemd's, -1 while unknown */
  /* Prepared by create, started by enter (borrowed until then). */
  bool pending;
  char *id;
  const oci_resources *res;
  const oci_device *devs;
  size_t ndevs;
};

void
sr_cg_systemd_free (struct sr_cg_systemd *sd)
{
  if (sd == NULL)
    return;
  sr_sd_unit_clear (&sd->unit);
  sr_sd_bus_close (sd->bus);
  free (sd->id);
  free (sd);
}

/* The bus and systemd's version, once. */
static int
connect_bus (struct sr_cg_systemd *sd, sr_error **err)
{
  if (sd->bus != NULL)
    return 0;
  if (sr_sd_bus_open (&sd->bus, err) < 0
      || sr_sd_bus_version (sd->bus, &sd->version, err) < 0)
    {
      sr_sd_bus_close (sd->bus);
      sd->bus = NULL;
      return sr_wrap (err, DRIVER);
    }
  return 0;
}

static bool
unified_only (const sr_cgroup *cg)
{
  return cg->layout == SR_CGROUP_V2;
}

/* Everything StartTransientUnit gets. */
static int
start_props (const sr_cgroup *cg, pid_t pid, struct sr_sd_props *out,
             sr_error **err)
{
  const struct sr_cg_systemd *sd = cg->sd;
  _cleanup_free_ char *desc = xasprintf ("sandrun container %s", sd->id);
  sr_sd_unit_props (&sd->unit, desc, pid, unified_only (cg), out);
  if (sr_sd_resource_props (sd->res, unified_only (cg), sd->version, out, err)
          < 0
      || sr_sd_device_props (sd->res, sd->devs, sd->ndevs, out, err) < 0)
    return sr_wrap (err, DRIVER);
  return 0;
}

/* Root's system bus only: a rootless container would need the user's
 * systemd and a cgroup delegated to it. */
static int
check_root (sr_error **err)
{
  if (geteuid () != 0)
    return sr_fail (err, ENOTSUP, DRIVER ": rootless containers (the user's "
                    "systemd) are not supported");
  if (!sr_cgroup_systemd_built ())
    return sr_fail (err, ENOTSUP, DRIVER ": sandrun was built without "
                    "libsystemd");
  return 0;
}

char *
sr_cgroup_systemd_plan_path (const char *id, const char *cgroups_path,
                             sr_error **err)
{
  struct sr_sd_unit u;
  if (check_root (err) < 0 || sr_sd_unit_parse (id, cgroups_path, &u, err) < 0)
    return NULL;
  char *record = xasprintf ("%s" SR_SD_RECORD_MARK, u.path);
  sr_sd_unit_clear (&u);
  return record;
}

int
sr_cgroup_systemd_create (const char *id, const char *cgroups_path,
                          const oci_resources *res, const oci_device *devices,
                          size_t devices_len, sr_cgroup **out, sr_error **err)
{
  if (check_root (err) < 0)
    return -1;
  _cleanup_cgroup_ sr_cgroup *cg = sr_cg_discover (err);
  if (cg == NULL)
    return -1;
  struct sr_cg_systemd *sd = cg->sd = xcalloc (1, sizeof *sd);
  cg->from_create = true;
  sd->version = -1;
  sd->id = xstrdup (id);
  sd->res = res;
  sd->devs = devices;
  sd->ndevs = devices_len;
  if (sr_sd_unit_parse (id, cgroups_path, &sd->unit, err) < 0)
    return -1;
  cg->record = xasprintf ("%s" SR_SD_RECORD_MARK, sd->unit.path);
  /* Connect and check the properties now, before there is a process. */
  _cleanup_sd_props_ struct sr_sd_props props = { NULL, 0 };
  if (connect_bus (sd, err) < 0 || start_props (cg, 0, &props, err) < 0)
    return -1;
  sd->pending = true;
  *out = steal_pointer (&cg);
  return 0;
}

static void
log_props (const char *unit, const struct sr_sd_props *props)
{
  if (!sr_log_debug_enabled ())
    return;
  for (size_t i = 0; i < props->len; i++)
    {
      _cleanup_free_ char *p = sr_sd_prop_format (&props->v[i]);
      sr_debug ("systemd: unit \"%s\": %s", unit, p);
    }
}

int
sr_cg_systemd_enter (sr_cgroup *cg, pid_t pid, sr_error **err)
{
  struct sr_cg_systemd *sd = cg->sd;
  if (sd == NULL || !sd->pending)
    return 0;
  sd->pending = false;
  _cleanup_sd_props_ struct sr_sd_props props = { NULL, 0 };
  if (start_props (cg, pid, &props, err) < 0)
    return -1;
  log_props (sd->unit.name, &props);
  if (sr_sd_start_unit (sd->bus, sd->unit.name, &props, err) < 0)
    return sr_wrap (err, DRIVER);
  /* Then the files, as for cgroupfs: what systemd has no property for,
   * and the hierarchies it does not manage (v1). */
  free (cg->record);
  cg->record = NULL;
  /* On failure the unit goes with the init: the create's cleanup kills it,
   * and destroys the container (stopping the then empty unit). */
  if (sr_cg_realize (cg, sd->unit.path, false, sd->res, sd->devs, sd->ndevs,
                     err) < 0)
    return -1;
  sd->res = NULL;
  sd->devs = NULL;
  char *paths = cg->record;
  cg->record = xasprintf ("%s" SR_SD_RECORD_MARK, paths);
  free (paths);
  sr_debug ("cgroup: systemd unit \"%s\" at \"%s\"", sd->unit.name,
            cg->record);
  return 0;
}

int
sr_cg_systemd_attach (sr_cgroup *cg, sr_error **err)
{
  const char *rec = cg->record;
  if (strstr (rec, SR_SD_RECORD_MARK) == NULL)
    return 0;
  /* The unit is the last component of the container's path. */
  size_t len = strcspn (rec, ";");
  const char *name = rec + len;
  while (name > rec && name[-1] != '/')
    name--;
  if (name == rec + len)
    return sr_fail (err, EINVAL, "invalid recorded cgroup path \"%s\"", rec);
  struct sr_cg_systemd *sd = cg->sd = xcalloc (1, sizeof *sd);
  sd->version = -1;
  sd->unit.name = xstrndup (name, (size_t) (rec + len - name));
  return 0;
}

int
sr_cg_systemd_apply (const sr_cgroup *cg, const oci_resources *res,
                     sr_error **err)
{
  struct sr_cg_systemd *sd = cg->sd;
  if (sd == NULL || sd->pending)
    return 0;
  _cleanup_sd_props_ struct sr_sd_props props = { NULL, 0 };
  if (connect_bus (sd, err) < 0)
    return -1;
  if (sr_sd_resource_props (res, unified_only (cg), sd->version, &props, err)
      < 0)
    return sr_wrap (err, DRIVER);
  if (props.len == 0)
    return 0;
  log_props (sd->unit.name, &props);
  if (sr_sd_set_unit_props (sd->bus, sd->unit.name, &props, err) < 0)
    return sr_wrap (err, DRIVER);
  return 0;
}

/* Whether processes stay in the cgroup for a while (killed ones take a
 * moment to leave). */
static bool
keeps_processes (const sr_cgroup *cg)
{
  for (int round = 0; round < EMPTY_WAIT_ROUNDS; round++)
    {
      _cleanup_free_ pid_t *pids = NULL;
      size_t n = 0;
      if (sr_cgroup_pids (cg, &pids, &n, NULL) < 0 || n == 0)
        return false;
      sr_cg_nap (10);
    }
  return true;
}

void
sr_cg_systemd_stop (const sr_cgroup *cg)
{
  struct sr_cg_systemd *sd = cg->sd;
  _cleanup_error_ sr_error *e = NULL;
  if (sd == NULL || sd->pending)
    return; /* never started */
  /* Called once the container's processes are killed: a unit that still
   * has some is not ours (a create that failed because another container
   * has a unit of that name). */
  if (keeps_processes (cg))
    {
      sr_debug ("systemd: unit \"%s\" still has processes: left alone",
                sd->unit.name);
      return;
    }
  if (connect_bus (sd, &e) < 0)
    {
      /* No systemd, no unit to stop (a create that failed to connect). */
      sr_debug ("%s", e->msg);
      return;
    }
  if (sr_sd_stop_unit (sd->bus, sd->unit.name, &e) < 0)
    sr_warn (DRIVER ": %s", e->msg);
}
