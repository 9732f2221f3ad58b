/* linux.resources as systemd unit properties (pure functions), as runc
 * maps them.  The cgroupfs code writes the same values afterwards; these
 * are what systemd re-applies when it realizes the unit again (a
 * daemon-reload, a sibling's change), so they must not differ from ours. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "../linux_attrs_internal.h"
#include "core/cgroup/cgroup_systemd.h"
#include "sandrun/util.h"

/* The kernel's default CFS period, the same on v1 and v2. */
#define DEFAULT_CPU_PERIOD 100000
#define USEC_PER_SEC 1000000
/* systemd keeps CPUQuota as a percentage: per-second quotas round up to
 * 10 ms so that the cgroup's own cpu.max is never above systemd's. */
#define QUOTA_STEP 10000

struct sr_sd_prop *
sr_sd_props_add (struct sr_sd_props *p, const char *name,
                 enum sr_sd_type type)
{
  p->v = xrealloc (p->v, (p->len + 1) * sizeof *p->v);
  struct sr_sd_prop *x = &p->v[p->len++];
  memset (x, 0, sizeof *x);
  x->name = name;
  x->type = type;
  return x;
}

static void
add_u64 (struct sr_sd_props *p, const char *name, uint64_t v)
{
  sr_sd_props_add (p, name, SR_SD_U64)->u64 = v;
}

static void
add_bool (struct sr_sd_props *p, const char *name, bool v)
{
  sr_sd_props_add (p, name, SR_SD_BOOL)->b = v;
}

static void
add_str (struct sr_sd_props *p, const char *name, const char *v)
{
  sr_sd_props_add (p, name, SR_SD_STRING)->str = xstrdup (v);
}

/* An OCI limit: -1 (or any negative) is unlimited. */
static uint64_t
limit_value (int64_t v)
{
  return v < 0 ? SR_SD_INFINITY : (uint64_t) v;
}

void
sr_sd_props_clear (struct sr_sd_props *p)
{
  for (size_t i = 0; i < p->len; i++)
    {
      struct sr_sd_prop *x = &p->v[i];
      free (x->str);
      free (x->u32s);
      free (x->bytes);
      for (size_t j = 0; x->type == SR_SD_DEVICES && j < x->len; j++)
        free (x->devs[j].path);
      free (x->devs);
    }
  free (p->v);
  p->v = NULL;
  p->len = 0;
}

const struct sr_sd_prop *
sr_sd_props_find (const struct sr_sd_props *p, const char *name)
{
  for (size_t i = p->len; i-- > 0;)
    if (strcmp (p->v[i].name, name) == 0)
      return &p->v[i];
  return NULL;
}

static char *
format_value (const struct sr_sd_prop *p)
{
  _cleanup_free_ char *acc = xstrdup ("");
  switch (p->type)
    {
    case SR_SD_STRING:
      return xstrdup (p->str);
    case SR_SD_BOOL:
      return xstrdup (p->b ? "yes" : "no");
    case SR_SD_U64:
      return p->u64 == SR_SD_INFINITY ? xstrdup ("infinity")
                                      : xasprintf ("%" PRIu64, p->u64);
    case SR_SD_U32S:
      for (size_t i = 0; i < p->len; i++)
        {
          char *n = xasprintf ("%s%s%" PRIu32, acc, i ? " " : "", p->u32s[i]);
          free (acc);
          acc = n;
        }
      return xasprintf ("[%s]", acc);
    case SR_SD_BYTES:
      for (size_t i = 0; i < p->len; i++)
        {
          char *n = xasprintf ("%s%02x", acc, p->bytes[i]);
          free (acc);
          acc = n;
        }
      return xasprintf ("0x%s", acc);
    case SR_SD_DEVICES:
      for (size_t i = 0; i < p->len; i++)
        {
          char *n = xasprintf ("%s%s%s %s", acc, i ? ", " : "",
                               p->devs[i].path, p->devs[i].perms);
          free (acc);
          acc = n;
        }
      return xasprintf ("[%s]", acc);
    }
  return xstrdup ("?");
}

char *
sr_sd_prop_format (const struct sr_sd_prop *p)
{
  _cleanup_free_ char *v = format_value (p);
  return xasprintf ("%s=%s", p->name, v);
}

void
sr_sd_unit_props (const struct sr_sd_unit *u, const char *description,
                  pid_t pid, bool v2, struct sr_sd_props *out)
{
  add_str (out, "Description", description);
  if (u->is_slice)
    add_str (out, "Wants", u->slice);
  else
    {
      add_str (out, "Slice", u->slice);
      add_bool (out, "Delegate", true);
    }
  /* A slice holds no processes in systemd's view: sr_cgroup_enter moves
   * the init into its cgroup. */
  if (pid > 0 && !u->is_slice)
    {
      struct sr_sd_prop *x = sr_sd_props_add (out, "PIDs", SR_SD_U32S);
      x->u32s = xmalloc (sizeof *x->u32s);
      x->u32s[0] = (uint32_t) pid;
      x->len = 1;
    }
  /* Accounting always, as runc: the same files as the cgroupfs driver. */
  add_bool (out, "MemoryAccounting", true);
  add_bool (out, "CPUAccounting", true);
  add_bool (out, v2 ? "IOAccounting" : "BlockIOAccounting", true);
  add_bool (out, "TasksAccounting", true);
  add_bool (out, "DefaultDependencies", false);
}

/* ---- resources ----------------------------------------------------------- */

static int
memory_props (const oci_memory *m, bool v2, struct sr_sd_props *out,
              sr_error **err)
{
  int64_t limit = m->limit.set ? m->limit.value : 0;
  if (limit != 0)
    add_u64 (out, v2 ? "MemoryMax" : "MemoryLimit", limit_value (limit));
  if (!v2)
    return 0;
  if (m->reservation.set && m->reservation.value != 0)
    add_u64 (out, "MemoryLow", limit_value (m->reservation.value));
  int64_t swap = 0;
  if (sr_cg_swap_to_v2 (m->swap.set ? m->swap.value : 0, limit, &swap, err)
      < 0)
    return -1;
  if (swap != 0)
    add_u64 (out, "MemorySwapMax", limit_value (swap));
  return 0;
}

/* CPUQuotaPerSecUSec from a CFS quota and period (runc's rules). */
static void
quota_props (int64_t quota, uint64_t period, int sd_version,
             struct sr_sd_props *out)
{
  if (period != 0 && sd_version >= 242)
    add_u64 (out, "CPUQuotaPeriodUSec", period);
  if (quota == 0 && period == 0)
    return;
  uint64_t per_sec = SR_SD_INFINITY;
  if (quota > 0)
    {
      uint64_t p = period ? period : DEFAULT_CPU_PERIOD;
      if ((uint64_t) quota <= UINT64_MAX / USEC_PER_SEC)
        {
          per_sec = (uint64_t) quota * USEC_PER_SEC / p;
          if (per_sec % QUOTA_STEP != 0)
            per_sec = (per_sec / QUOTA_STEP + 1) * QUOTA_STEP;
        }
    }
  add_u64 (out, "CPUQuotaPerSecUSec", per_sec);
}

/* "0-3,8" -> bytes, CPU 0 the lowest bit of the first (what systemd takes
 * for AllowedCPUs and AllowedMemoryNodes). */
static int
add_id_bytes (struct sr_sd_props *out, const char *name, const char *list,
              const char *what, sr_error **err)
{
  _cleanup_idset_ struct sr_idset set = { 0 };
  if (sr_idset_parse (list, SR_IDSET_MAX, NULL, what, "id", &set, err) < 0)
    return -1;
  if (set.count == 0)
    return 0;
  struct sr_sd_prop *x = sr_sd_props_add (out, name, SR_SD_BYTES);
  x->len = (set.high + 7) / 8;
  x->bytes = xcalloc (x->len, 1);
  for (unsigned long id = 0; id < set.high; id++)
    if (sr_idset_has (&set, id))
      x->bytes[id / 8] |= (uint8_t) (1u << (id % 8));
  return 0;
}

static int
cpu_props (const oci_cpu *c, bool v2, int sd_version, struct sr_sd_props *out,
           sr_error **err)
{
  if (c->shares.set && c->shares.value != 0)
    {
      if (v2)
        add_u64 (out, "CPUWeight", sr_cg_shares_to_weight (c->shares.value));
      else
        add_u64 (out, "CPUShares", c->shares.value);
    }
  quota_props (c->quota.set ? c->quota.value : 0,
               c->period.set ? c->period.value : 0, sd_version, out);
  if (sd_version < 244)
    return 0;
  if (c->cpus != NULL
      && add_id_bytes (out, "AllowedCPUs", c->cpus, "cpu.cpus", err) < 0)
    return -1;
  if (c->mems != NULL
      && add_id_bytes (out, "AllowedMemoryNodes", c->mems, "cpu.mems", err)
             < 0)
    return -1;
  return 0;
}

/* ---- linux.resources.unified (v2): the files systemd has properties for */

static const struct
{
  const char *file, *prop;
} unified_limits[] = {
  { "memory.high", "MemoryHigh" },  { "memory.low", "MemoryLow" },
  { "memory.min", "MemoryMin" },    { "memory.max", "MemoryMax" },
  { "memory.swap.max", "MemorySwapMax" }, { "pids.max", "TasksMax" },
  { "cpu.weight", "CPUWeight" },
};

/* A number or "max" (cpu.weight takes no "max": the kernel refuses it). */
static int
parse_limit (const char *key, const char *v, bool max_ok, uint64_t *out,
             sr_error **err)
{
  unsigned long long n;
  if (max_ok && strcmp (v, "max") == 0)
    *out = SR_SD_INFINITY;
  else if (sr_parse_u64 (v, &n) == 0)
    *out = n;
  else
    return sr_fail (err, EINVAL, "unified: \"%s\": invalid value \"%s\"", key,
                    v);
  return 0;
}

/* cpu.max: "QUOTA|max [PERIOD]". */
static int
unified_cpu_max (const char *v, int sd_version, struct sr_sd_props *out,
                 sr_error **err)
{
  _cleanup_free_ char *copy = xstrdup (v);
  char *save = NULL;
  char *q = strtok_r (copy, " ", &save);
  char *p = q ? strtok_r (NULL, " ", &save) : NULL;
  uint64_t quota = SR_SD_INFINITY, period = DEFAULT_CPU_PERIOD;
  if (q == NULL || strtok_r (NULL, " ", &save) != NULL)
    return sr_fail (err, EINVAL, "unified: \"cpu.max\": invalid value \"%s\"",
                    v);
  if (parse_limit ("cpu.max", q, true, &quota, err) < 0
      || (p != NULL && parse_limit ("cpu.max", p, false, &period, err) < 0))
    return -1;
  if (quota != SR_SD_INFINITY && quota > INT64_MAX)
    return sr_fail (err, EINVAL, "unified: \"cpu.max\": invalid value \"%s\"",
                    v);
  quota_props (quota == SR_SD_INFINITY ? 0 : (int64_t) quota, period,
               sd_version, out);
  return 0;
}

static int
unified_props (const oci_map *u, int sd_version, struct sr_sd_props *out,
               sr_error **err)
{
  for (size_t i = 0; i < u->len; i++)
    {
      const char *key = u->v[i].key, *val = u->v[i].value ? u->v[i].value : "";
      /* The kernel takes surrounding blanks; so does systemd's mapping. */
      _cleanup_free_ char *v = xstrdup (val + strspn (val, " \t\n"));
      size_t l = strlen (v);
      while (l > 0 && strchr (" \t\n", v[l - 1]) != NULL)
        v[--l] = '\0';
      for (size_t j = 0; j < ARRAY_SIZE (unified_limits); j++)
        {
          uint64_t n = 0;
          if (strcmp (key, unified_limits[j].file) != 0)
            continue;
          bool max_ok = strcmp (key, "cpu.weight") != 0;
          if (parse_limit (key, v, max_ok, &n, err) < 0)
            return -1;
          add_u64 (out, unified_limits[j].prop, n);
        }
      if (strcmp (key, "cpu.max") == 0
          && unified_cpu_max (v, sd_version, out, err) < 0)
        return -1;
      if (sd_version >= 244 && strcmp (key, "cpuset.cpus") == 0
          && add_id_bytes (out, "AllowedCPUs", v, "unified cpuset.cpus", err)
                 < 0)
        return -1;
      if (sd_version >= 244 && strcmp (key, "cpuset.mems") == 0
          && add_id_bytes (out, "AllowedMemoryNodes", v, "unified cpuset.mems",
                           err) < 0)
        return -1;
    }
  return 0;
}

int
sr_sd_resource_props (const oci_resources *res, bool v2, int sd_version,
                      struct sr_sd_props *out, sr_error **err)
{
  if (res == NULL)
    return 0;
  if (res->memory != NULL && memory_props (res->memory, v2, out, err) < 0)
    return -1;
  if (res->cpu != NULL && cpu_props (res->cpu, v2, sd_version, out, err) < 0)
    return -1;
  if (res->pids != NULL && res->pids->limit.set && res->pids->limit.value != 0)
    add_u64 (out, "TasksMax", limit_value (res->pids->limit.value));
  const oci_block_io *b = res->block_io;
  if (b != NULL && b->weight.set && b->weight.value != 0)
    {
      if (v2)
        add_u64 (out, "IOWeight",
                 sr_cg_blkio_weight_to_io_weight (b->weight.value));
      else
        add_u64 (out, "BlockIOWeight", b->weight.value);
    }
  /* Last: the unified values win over the mapped ones, in systemd as in
   * the files. */
  if (v2 && unified_props (&res->unified, sd_version, out, err) < 0)
    return -1;
  return 0;
}
