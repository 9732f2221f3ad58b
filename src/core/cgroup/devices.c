/* Device cgroup rules: building the list, and the v1 controller. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "devices.h"
#include "internal.h"
#include "sandrun/util.h"

/* What runc and crun allow every container (after the config's rules). */
static const struct sr_cg_dev_rule default_rules[] = {
  { true, 'c', -1, -1, SR_DEV_MKNOD },
  { true, 'b', -1, -1, SR_DEV_MKNOD },
  { true, 'c', 1, 3, SR_DEV_ALL },    /* null */
  { true, 'c', 1, 5, SR_DEV_ALL },    /* zero */
  { true, 'c', 1, 7, SR_DEV_ALL },    /* full */
  { true, 'c', 1, 8, SR_DEV_ALL },    /* random */
  { true, 'c', 1, 9, SR_DEV_ALL },    /* urandom */
  { true, 'c', 5, 0, SR_DEV_ALL },    /* tty */
  { true, 'c', 5, 1, SR_DEV_ALL },    /* console */
  { true, 'c', 5, 2, SR_DEV_ALL },    /* ptmx */
  { true, 'c', 136, -1, SR_DEV_ALL }, /* pts/N */
};

static int
parse_access (const char *s, unsigned *out)
{
  unsigned bits = 0;
  for (const char *p = s ? s : ""; *p; p++)
    {
      if (*p == 'r')
        bits |= SR_DEV_READ;
      else if (*p == 'w')
        bits |= SR_DEV_WRITE;
      else if (*p == 'm')
        bits |= SR_DEV_MKNOD;
      else if (*p == 'a')
        bits |= SR_DEV_ALL; /* "rwa", as some configs say: runc takes it */
      else
        return -1;
    }
  *out = bits ? bits : SR_DEV_ALL;
  return 0;
}

static int
rule_from_config (const oci_device_rule *d, struct sr_cg_dev_rule *r,
                  sr_error **err)
{
  const char *type = d->type ? d->type : "a";
  if (strlen (type) != 1 || strchr ("acb", type[0]) == NULL)
    return sr_fail (err, EINVAL, "devices: invalid type \"%s\"", type);
  *r = (struct sr_cg_dev_rule){
    .allow = d->allow,
    .type = type[0],
    .major = d->major.set && d->major.value >= 0 ? d->major.value : -1,
    .minor = d->minor.set && d->minor.value >= 0 ? d->minor.value : -1,
  };
  if (parse_access (d->access, &r->access) < 0)
    return sr_fail (err, EINVAL, "devices: invalid access \"%s\"", d->access);
  return 0;
}

int
sr_cg_device_rules (const oci_resources *res, const oci_device *devs,
                    size_t ndevs, struct sr_cg_dev_rule **out, size_t *n,
                    sr_error **err)
{
  size_t nres = res ? res->devices_len : 0;
  size_t cap = 1 + nres + ARRAY_SIZE (default_rules);
  _cleanup_free_ struct sr_cg_dev_rule *rules = xcalloc (cap, sizeof *rules);
  size_t k = 0;
  rules[k++] = (struct sr_cg_dev_rule){ false, 'a', -1, -1, SR_DEV_ALL };
  for (size_t i = 0; i < nres; i++)
    if (rule_from_config (&res->devices[i], &rules[k++], err) < 0)
      return -1;
  for (size_t i = 0; i < ARRAY_SIZE (default_rules); i++)
    rules[k++] = default_rules[i];
  for (size_t i = 0; i < ndevs; i++)
    {
      const char *t = devs[i].type ? devs[i].type : "";
      if (strcmp (t, "p") == 0)
        continue; /* fifos are not device nodes */
      if (strcmp (t, "c") != 0 && strcmp (t, "u") != 0 && strcmp (t, "b") != 0)
        return sr_fail (err, EINVAL, "devices: \"%s\": invalid type \"%s\"",
                        devs[i].path ? devs[i].path : "", t);
      /* No rule of its own: a node in linux.devices is usable only as
       * linux.resources.devices allows it, as with runc and crun (an
       * engine adds the allow rule for its --device). */
    }
  *out = steal_pointer (&rules);
  *n = k;
  return 0;
}

void
sr_cg_dev_access_str (unsigned access, char out[4])
{
  size_t k = 0;
  if (access & SR_DEV_READ)
    out[k++] = 'r';
  if (access & SR_DEV_WRITE)
    out[k++] = 'w';
  if (access & SR_DEV_MKNOD)
    out[k++] = 'm';
  out[k] = '\0';
}

static void
format_rule (const struct sr_cg_dev_rule *r, char *buf, size_t len)
{
  char major[24] = "*", minor[24] = "*", access[4];
  if (r->major >= 0)
    snprintf (major, sizeof major, "%" PRId64, r->major);
  if (r->minor >= 0)
    snprintf (minor, sizeof minor, "%" PRId64, r->minor);
  sr_cg_dev_access_str (r->access, access);
  if (r->type == 'a')
    snprintf (buf, len, "a");
  else
    snprintf (buf, len, "%c %s:%s %s", r->type, major, minor, access);
}

int
sr_cg_v1_devices (int dirfd, const struct sr_cg_dev_rule *rules, size_t n,
                  sr_error **err)
{
  for (size_t i = 0; i < n; i++)
    {
      char line[96];
      format_rule (&rules[i], line, sizeof line);
      if (sr_cg_write (dirfd, rules[i].allow ? "devices.allow" : "devices.deny",
                       line, err) < 0)
        return -1;
    }
  return 0;
}
