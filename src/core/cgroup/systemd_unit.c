/* The systemd driver's unit names: "slice:prefix:name" to a unit and its
 * cgroup, as runc computes them (pure functions). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/cgroup/cgroup_systemd.h"
#include "sandrun/util.h"

#define SLICE_SUFFIX ".slice"
/* systemd's UNIT_NAME_MAX counts the NUL. */
#define UNIT_NAME_MAX 255
#define DEFAULT_SLICE "system.slice"
#define DEFAULT_PREFIX "sandrun"

static bool
has_suffix (const char *s, const char *suffix)
{
  size_t l = strlen (s), sl = strlen (suffix);
  return l >= sl && strcmp (s + l - sl, suffix) == 0;
}

int
sr_sd_expand_slice (const char *slice, char **path, sr_error **err)
{
  if (!has_suffix (slice, SLICE_SUFFIX) || strchr (slice, '/') != NULL)
    return sr_fail (err, EINVAL, "invalid slice name \"%s\"", slice);
  size_t base_len = strlen (slice) - strlen (SLICE_SUFFIX);
  if (base_len == 1 && slice[0] == '-')
    {
      *path = xstrdup ("/");
      return 0;
    }
  /* Each dash ends a parent: "a-b-c" -> /a.slice/a-b.slice/a-b-c.slice. */
  _cleanup_free_ char *out = xstrdup ("");
  for (size_t i = 0; i <= base_len; i++)
    {
      if (i < base_len && slice[i] != '-')
        continue;
      if (i == 0 || slice[i - 1] == '-') /* an empty component */
        return sr_fail (err, EINVAL, "invalid slice name \"%s\"", slice);
      char *next = xasprintf ("%s/%.*s" SLICE_SUFFIX, out, (int) i, slice);
      free (out);
      out = next;
    }
  *path = steal_pointer (&out);
  return 0;
}

/* The characters systemd allows in unit names (no '@': no templates). */
static bool
valid_unit_chars (const char *s)
{
  static const char extra[] = ":-_.\\";
  for (const char *p = s; *p; p++)
    {
      bool alnum = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
                   || (*p >= '0' && *p <= '9');
      if (!alnum && strchr (extra, *p) == NULL)
        return false;
    }
  return true;
}

/* `what`: "systemd unit name" or "slice name", for the message. */
static int
check_unit_name (const char *name, const char *what, const char *cgroups_path,
                 sr_error **err)
{
  if (strlen (name) > UNIT_NAME_MAX || !valid_unit_chars (name))
    return sr_fail (err, EINVAL, "cgroupsPath \"%s\": invalid %s \"%s\"",
                    cgroups_path, what, name);
  return 0;
}

/* Split "slice:prefix:name" into its three fields (malloc'd). */
static int
split_fields (const char *cgroups_path, char *fields[3], sr_error **err)
{
  const char *c1 = strchr (cgroups_path, ':');
  const char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
  if (c2 == NULL || strchr (c2 + 1, ':') != NULL)
    return sr_fail (err, EINVAL, "cgroupsPath \"%s\": expected the form "
                    "\"slice:prefix:name\" of the systemd cgroup driver",
                    cgroups_path);
  fields[0] = xstrndup (cgroups_path, (size_t) (c1 - cgroups_path));
  fields[1] = xstrndup (c1 + 1, (size_t) (c2 - c1 - 1));
  fields[2] = xstrdup (c2 + 1);
  return 0;
}

static void
free_fields (char *fields[3])
{
  for (int i = 0; i < 3; i++)
    free (fields[i]);
}

static int
unit_from_fields (char *const f[3], const char *cgroups_path,
                  struct sr_sd_unit *u, sr_error **err)
{
  const char *slice = f[0][0] ? f[0] : DEFAULT_SLICE;
  if (f[2][0] == '\0')
    return sr_fail (err, EINVAL, "cgroupsPath \"%s\": empty name",
                    cgroups_path);
  u->slice = xstrdup (slice);
  u->is_slice = has_suffix (f[2], SLICE_SUFFIX);
  if (u->is_slice)
    u->name = xstrdup (f[2]);
  else if (f[1][0] == '\0')
    u->name = xasprintf ("%s.scope", f[2]);
  else
    u->name = xasprintf ("%s-%s.scope", f[1], f[2]);
  if (check_unit_name (u->name, "systemd unit name", cgroups_path, err) < 0)
    return -1;

  _cleanup_free_ char *parent = NULL;
  if (check_unit_name (slice, "slice name", cgroups_path, err) < 0)
    return -1;
  if (sr_sd_expand_slice (slice, &parent, err) < 0)
    return sr_wrap (err, "cgroupsPath \"%s\"", cgroups_path);
  if (!u->is_slice)
    {
      u->path = xasprintf ("%s/%s", strcmp (parent, "/") == 0 ? "" : parent,
                           u->name);
      return 0;
    }
  /* Where systemd puts a slice depends on its own name alone. */
  if (sr_sd_expand_slice (u->name, &u->path, err) < 0)
    return sr_wrap (err, "cgroupsPath \"%s\"", cgroups_path);
  if (strcmp (u->path, "/") == 0)
    return sr_fail (err, EINVAL, "cgroupsPath \"%s\": the root slice cannot "
                    "be a container's cgroup", cgroups_path);
  return 0;
}

int
sr_sd_unit_parse (const char *id, const char *cgroups_path,
                  struct sr_sd_unit *out, sr_error **err)
{
  _cleanup_free_ char *deflt = NULL;
  char *fields[3] = { NULL, NULL, NULL };

  memset (out, 0, sizeof *out);
  if (cgroups_path == NULL || cgroups_path[0] == '\0')
    cgroups_path = deflt = xasprintf (":" DEFAULT_PREFIX ":%s", id);
  if (split_fields (cgroups_path, fields, err) < 0)
    return -1;
  int r = unit_from_fields (fields, cgroups_path, out, err);
  free_fields (fields);
  if (r < 0)
    sr_sd_unit_clear (out);
  return r;
}

void
sr_sd_unit_clear (struct sr_sd_unit *u)
{
  free (u->slice);
  free (u->name);
  free (u->path);
  memset (u, 0, sizeof *u);
}

int
sr_sd_parse_version (const char *s)
{
  while (*s == '"' || *s == 'v')
    s++;
  long v = 0;
  const char *p = s;
  for (; *p >= '0' && *p <= '9' && v < 1000000; p++)
    v = v * 10 + (*p - '0');
  return p == s ? -1 : (int) v;
}
