/* Operations on a live container beyond the basic lifecycle: pause,
 * resume, update (container_ops.c), and the config rewrite that update
 * needs (resources_merge.c). */
#ifndef SANDRUN_CONTAINER_OPS_H
#define SANDRUN_CONTAINER_OPS_H

#include <stddef.h>

#include "sandrun/container.h"
#include "sandrun/error.h"

/* Freeze a running (or created) container: "container not running"
 * otherwise, as runc. */
int sr_container_pause (const struct sr_globals *g, const char *id,
                        sr_error **err);
/* Thaw a paused container: "container not paused" otherwise. */
int sr_container_resume (const struct sr_globals *g, const char *id,
                         sr_error **err);

struct sr_update_opts
{
  const char *resources; /* a linux.resources JSON object */
  size_t resources_len;
  const char *l3_cache_schema; /* Intel RDT; NULL: unchanged */
  const char *mem_bw_schema;
};

/* `update`: merge the resources into the container's linux.resources,
 * apply the result to its cgroup and save it in the container's config
 * (under the container's exclusive lock).  Device rules cannot be changed
 * (ignored, as with runc).  When applying fails the previous resources
 * are applied again and the saved config is left as it was. */
int sr_container_update (const struct sr_globals *g, const char *id,
                         const struct sr_update_opts *opts, sr_error **err);

/* The merge behind update, on JSON texts: `patch` (a linux.resources
 * object) goes into config.json's linux.resources -- objects merge key by
 * key, anything else replaces, null and absent mean "unchanged"; the
 * patch's "devices" are left out; a memory limit of -1 without a swap
 * limit sets swap to -1 too (runc).  *config_out: the new config.json;
 * *resources_out: the merged linux.resources without device rules (what to
 * apply); *previous_out: the resources before, likewise.  All malloc'd. */
int sr_resources_merge (const char *config, size_t config_len,
                        const char *patch, size_t patch_len,
                        char **config_out, char **resources_out,
                        char **previous_out, sr_error **err);

#endif
