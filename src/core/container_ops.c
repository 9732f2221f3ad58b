/* pause, resume and update of a live container.  Each holds the
 * container's exclusive lock, so that they do not interleave with each
 * other, with start or with delete. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "oci-spec/oci-spec.h"
#include "core/cgroup/cgroup.h"
#include "sandrun/container_ops.h"
#include "core/lifecycle.h"
#include "sandrun/log.h"
#include "core/state.h"
#include "sandrun/util.h"

#define SAVED_CONFIG "config.json"

/* Load `id` locked, with its cgroup open, when its status is one of
 * `ok` (a bit set of sr_status); else fail with `wrong` (runc's words). */
static int
load_with_cgroup (const struct sr_globals *g, const char *id, unsigned ok,
                  const char *wrong, sr_container *c, sr_cgroup **cg,
                  sr_error **err)
{
  if (sr_container_load (g, id, true, c, err) < 0)
    return -1;
  if (!(ok & (1u << c->status)) || c->rec.cgroup_path == NULL)
    return sr_fail (err, 0, "%s", wrong);
  return sr_cgroup_open (c->rec.cgroup_path, cg, err);
}

#define BIT(s) (1u << (s))

int
sr_container_pause (const struct sr_globals *g, const char *id, sr_error **err)
{
  _cleanup_container_ sr_container c = SR_CONTAINER_INIT;
  _cleanup_cgroup_ sr_cgroup *cg = NULL;

  /* runc pauses a created container too (its init waits in the fifo). */
  if (load_with_cgroup (g, id, BIT (SR_STATUS_RUNNING) | BIT (SR_STATUS_CREATED),
                        "container not running", &c, &cg, err) < 0)
    return sr_wrap (err, "pause \"%s\"", id);
  if (sr_cgroup_freeze (cg, true, err) < 0)
    return sr_wrap (err, "pause \"%s\"", id);
  return 0;
}

int
sr_container_resume (const struct sr_globals *g, const char *id, sr_error **err)
{
  _cleanup_container_ sr_container c = SR_CONTAINER_INIT;
  _cleanup_cgroup_ sr_cgroup *cg = NULL;

  if (load_with_cgroup (g, id, BIT (SR_STATUS_PAUSED), "container not paused",
                        &c, &cg, err) < 0)
    return sr_wrap (err, "resume \"%s\"", id);
  if (sr_cgroup_freeze (cg, false, err) < 0)
    return sr_wrap (err, "resume \"%s\"", id);
  return 0;
}

/* ---- update -------------------------------------------------------------- */

/* runc's checks: a schema for a resctrl feature the host lacks is an
 * error.  sandrun has no resctrl groups at all (create refuses
 * linux.intelRdt), so a host that has the feature gets an error too. */
static int
check_rdt (const struct sr_update_opts *o, sr_error **err)
{
  if (o->l3_cache_schema != NULL && o->l3_cache_schema[0]
      && access ("/sys/fs/resctrl/info/L3", F_OK) < 0)
    return sr_fail (err, 0, "Intel RDT/CAT: l3 cache schema is not enabled");
  if (o->mem_bw_schema != NULL && o->mem_bw_schema[0]
      && access ("/sys/fs/resctrl/info/MB", F_OK) < 0)
    return sr_fail (err, 0, "Intel RDT/MBA: memory bandwidth schema is not enabled");
  if ((o->l3_cache_schema != NULL && o->l3_cache_schema[0])
      || (o->mem_bw_schema != NULL && o->mem_bw_schema[0]))
    return sr_fail (err, ENOTSUP, "Intel RDT: resctrl groups are not "
                    "implemented");
  return 0;
}

static int
apply_text (const sr_cgroup *cg, const char *text, sr_error **err)
{
  oci_resources *res = oci_resources_parse_data (text, strlen (text), err);
  if (res == NULL)
    return -1;
  int r = sr_cgroup_apply (cg, res, err);
  oci_resources_free (res);
  return r;
}

int
sr_container_update (const struct sr_globals *g, const char *id,
                     const struct sr_update_opts *o, sr_error **err)
{
  _cleanup_container_ sr_container c = SR_CONTAINER_INIT;
  _cleanup_cgroup_ sr_cgroup *cg = NULL;
  _cleanup_free_ char *config = NULL, *new_config = NULL;
  _cleanup_free_ char *merged = NULL, *previous = NULL;
  size_t len = 0;

  /* The input alone first: its errors name its own fields. */
  oci_resources *check = oci_resources_parse_data (o->resources,
                                                   o->resources_len, err);
  if (check == NULL)
    return sr_wrap (err, "update \"%s\": resources", id);
  if (check->devices_len > 0)
    sr_warn ("update \"%s\": device rules cannot be updated (ignored)", id);
  oci_resources_free (check);
  if (check_rdt (o, err) < 0)
    return sr_wrap (err, "update \"%s\"", id);

  unsigned live = BIT (SR_STATUS_CREATED) | BIT (SR_STATUS_RUNNING)
                  | BIT (SR_STATUS_PAUSED);
  if (load_with_cgroup (g, id, live, "container not running", &c, &cg, err) < 0
      || sr_read_file_at (c.dirfd, SAVED_CONFIG, OCI_MAX_DOCUMENT_SIZE,
                          &config, &len, err) < 0
      || sr_resources_merge (config, len, o->resources, o->resources_len,
                             &new_config, &merged, &previous, err) < 0)
    return sr_wrap (err, "update \"%s\"", id);
  if (apply_text (cg, merged, err) < 0)
    {
      sr_error *e = NULL;
      if (apply_text (cg, previous, &e) < 0)
        {
          sr_warn ("update \"%s\": restoring the previous resources: %s", id,
                   e->msg);
          sr_error_free (e);
        }
      return sr_wrap (err, "update \"%s\"", id);
    }
  if (sr_write_file_atomic (c.dirfd, SAVED_CONFIG, new_config,
                            strlen (new_config), 0600, err) < 0)
    return sr_wrap (err, "update \"%s\": save the config", id);
  return 0;
}
