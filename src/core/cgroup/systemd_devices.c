/* The device cgroup rules as systemd's DevicePolicy/DeviceAllow (pure).
 *
 * Our rules are an ordered list where a later match wins; systemd takes an
 * allow list only.  The list is flattened by replaying the rules: an allow
 * adds an entry, a deny takes its access away from every entry it touches.
 * A deny narrower than an entry ("c 1:3 w" after "c *:* rwm") cannot be
 * carved out of it, so the entry loses that access everywhere: systemd's
 * view is never wider than ours, at worst narrower. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "devices.h"
#include "internal.h"
#include "core/cgroup/cgroup_systemd.h"
#include "sandrun/util.h"

struct allow_list
{
  struct sr_cg_dev_rule *v;
  size_t len;
};

static bool
overlaps (int64_t a, int64_t b)
{
  return a < 0 || b < 0 || a == b;
}

static void
allow_add (struct allow_list *l, char type, const struct sr_cg_dev_rule *r)
{
  for (size_t i = 0; i < l->len; i++)
    if (l->v[i].type == type && l->v[i].major == r->major
        && l->v[i].minor == r->minor)
      {
        l->v[i].access |= r->access;
        return;
      }
  l->v = xrealloc (l->v, (l->len + 1) * sizeof *l->v);
  l->v[l->len++] = (struct sr_cg_dev_rule){ true, type, r->major, r->minor,
                                            r->access };
}

static void
deny (struct allow_list *l, const struct sr_cg_dev_rule *r)
{
  for (size_t i = 0; i < l->len; i++)
    {
      struct sr_cg_dev_rule *e = &l->v[i];
      if ((r->type == 'a' || r->type == e->type)
          && overlaps (r->major, e->major) && overlaps (r->minor, e->minor))
        e->access &= ~r->access;
    }
}

static void
replay (const struct sr_cg_dev_rule *rules, size_t n, struct allow_list *l)
{
  for (size_t i = 0; i < n; i++)
    {
      const struct sr_cg_dev_rule *r = &rules[i];
      if (!r->allow)
        deny (l, r);
      else if (r->type == 'a')
        {
          allow_add (l, 'c', r);
          allow_add (l, 'b', r);
        }
      else
        allow_add (l, r->type, r);
    }
}

static bool
allows_everything (const struct allow_list *l, char type)
{
  for (size_t i = 0; i < l->len; i++)
    if (l->v[i].type == type && l->v[i].major < 0 && l->v[i].minor < 0
        && l->v[i].access == SR_DEV_ALL)
      return true;
  return false;
}

/* systemd's name for an entry; NULL for "*:N", which it has none for. */
static char *
entry_path (const struct sr_cg_dev_rule *e)
{
  const char *group = e->type == 'b' ? "block" : "char";
  if (e->major < 0)
    return e->minor < 0 ? xasprintf ("%s-*", group) : NULL;
  if (e->minor < 0)
    return xasprintf ("%s-%" PRId64, group, e->major);
  return xasprintf ("/dev/%s/%" PRId64 ":%" PRId64, group, e->major, e->minor);
}

static void
fill_allow (struct sr_sd_prop *x, const struct allow_list *l)
{
  x->devs = xcalloc (l->len ? l->len : 1, sizeof *x->devs);
  for (size_t i = 0; i < l->len; i++)
    {
      const struct sr_cg_dev_rule *e = &l->v[i];
      char *path = e->access ? entry_path (e) : NULL;
      if (path == NULL)
        continue;
      x->devs[x->len].path = path;
      sr_cg_dev_access_str (e->access, x->devs[x->len].perms);
      x->len++;
    }
}

int
sr_sd_device_props (const oci_resources *res, const oci_device *devs,
                    size_t ndevs, struct sr_sd_props *out, sr_error **err)
{
  _cleanup_free_ struct sr_cg_dev_rule *rules = NULL;
  size_t n = 0;
  if (sr_cg_device_rules (res, devs, ndevs, &rules, &n, err) < 0)
    return -1;
  struct allow_list l = { NULL, 0 };
  replay (rules, n, &l);

  bool all = allows_everything (&l, 'c') && allows_everything (&l, 'b');
  sr_sd_props_add (out, "DevicePolicy", SR_SD_STRING)->str
      = xstrdup (all ? "auto" : "strict");
  /* An empty DeviceAllow resets the unit's list: only ours remain. */
  sr_sd_props_add (out, "DeviceAllow", SR_SD_DEVICES);
  if (!all)
    fill_allow (sr_sd_props_add (out, "DeviceAllow", SR_SD_DEVICES), &l);
  free (l.v);
  return 0;
}
