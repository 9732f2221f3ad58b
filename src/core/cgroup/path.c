/* Pure path handling for cgroups: validating linux.cgroupsPath, placing it
 * in each hierarchy, and the form recorded in the container's state. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sandrun/util.h"

static bool
has_forbidden_char (const char *s)
{
  for (const unsigned char *p = (const unsigned char *) s; *p; p++)
    if (*p < 0x20 || *p == 0x7f || *p == ';')
      return true;
  return false;
}

/* "slice:prefix:name": what --systemd-cgroup takes. */
static bool
is_systemd_form (const char *s)
{
  if (s[0] == '/' || strchr (s, '/') != NULL)
    return false;
  const char *c1 = strchr (s, ':');
  const char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
  return c2 != NULL && strchr (c2 + 1, ':') == NULL;
}

static int
normalize_id (const char *id, char **out, sr_error **err)
{
  if (id == NULL || id[0] == '\0')
    return sr_fail (err, EINVAL, "cgroup: empty container id");
  if (strchr (id, '/') != NULL || strcmp (id, ".") == 0
      || strcmp (id, "..") == 0 || has_forbidden_char (id))
    return sr_fail (err, EINVAL, "cgroup: invalid container id \"%s\"", id);
  *out = xstrdup (id);
  return 0;
}

int
sr_cg_normalize (const char *id, const char *cgroups_path, char **out,
                 sr_error **err)
{
  if (cgroups_path == NULL || cgroups_path[0] == '\0')
    return normalize_id (id, out, err);
  if (has_forbidden_char (cgroups_path))
    return sr_fail (err, EINVAL, "cgroupsPath \"%s\": invalid character",
                    cgroups_path);
  if (is_systemd_form (cgroups_path))
    return sr_fail (err, EINVAL,
                    "cgroupsPath \"%s\": the systemd form "
                    "\"slice:prefix:name\" needs --systemd-cgroup",
                    cgroups_path);

  bool absolute = cgroups_path[0] == '/';
  size_t len = strlen (cgroups_path);
  _cleanup_free_ char *res = xmalloc (len + 2);
  size_t used = 0;
  const char *p = cgroups_path;
  while (*p)
    {
      while (*p == '/')
        p++;
      size_t n = strcspn (p, "/");
      if (n == 0)
        break;
      if (n == 2 && p[0] == '.' && p[1] == '.')
        return sr_fail (err, EINVAL, "cgroupsPath \"%s\": \"..\" is not allowed",
                        cgroups_path);
      if (!(n == 1 && p[0] == '.'))
        {
          if (used > 0 || absolute)
            res[used++] = '/';
          memcpy (res + used, p, n);
          used += n;
        }
      p += n;
    }
  res[used] = '\0';
  if (used == 0)
    return sr_fail (err, EINVAL, "cgroupsPath \"%s\" names no cgroup",
                    cgroups_path);
  *out = steal_pointer (&res);
  return 0;
}

static char *
dirname_of (const char *path)
{
  const char *slash = strrchr (path, '/');
  if (slash == NULL || slash == path)
    return xstrdup ("/");
  return xstrndup (path, (size_t) (slash - path));
}

char *
sr_cg_resolve (const char *own, bool v2, const char *normalized)
{
  if (normalized[0] == '/')
    return xstrdup (normalized);
  _cleanup_free_ char *base = v2 ? dirname_of (own) : xstrdup (own);
  size_t blen = strlen (base);
  while (blen > 0 && base[blen - 1] == '/')
    base[--blen] = '\0';
  return xasprintf ("%s/%s", base, normalized);
}

static const char *
most_common_path (const struct sr_cg_hier *h, size_t n)
{
  const char *best = n > 0 ? h[0].path : "/";
  size_t best_count = 0;
  for (size_t i = 0; i < n; i++)
    {
      size_t count = 0;
      for (size_t j = 0; j < n; j++)
        count += strcmp (h[i].path, h[j].path) == 0;
      if (count > best_count)
        {
          best = h[i].path;
          best_count = count;
        }
    }
  return best;
}

char *
sr_cg_record_format (const struct sr_cg_hier *h, size_t n)
{
  const char *common = most_common_path (h, n);
  char *rec = xstrdup (common);
  for (size_t i = 0; i < n; i++)
    {
      if (strcmp (h[i].path, common) == 0)
        continue;
      char *next = xasprintf ("%s;%s:%s", rec, h[i].key, h[i].path);
      free (rec);
      rec = next;
    }
  return rec;
}

int
sr_cg_record_lookup (const char *record, const char *key, char **path,
                     sr_error **err)
{
  if (record == NULL || record[0] != '/')
    return sr_fail (err, EINVAL, "invalid recorded cgroup path \"%s\"",
                    record ? record : "");
  size_t first = strcspn (record, ";");
  const char *found = record;
  size_t found_len = first;
  const char *p = record + first;
  while (*p == ';')
    {
      p++;
      size_t len = strcspn (p, ";");
      if (*p == '@')
        {
          p += len; /* a mark of the driver (cgroup_systemd.h), no path */
          continue;
        }
      const char *colon = memchr (p, ':', len);
      if (colon == NULL || colon[1] != '/')
        return sr_fail (err, EINVAL, "invalid recorded cgroup path \"%s\"",
                        record);
      size_t klen = (size_t) (colon - p);
      if (klen == strlen (key) && memcmp (p, key, klen) == 0)
        {
          found = colon + 1;
          found_len = len - klen - 1;
        }
      p += len;
    }
  *path = xstrndup (found, found_len);
  return 0;
}
