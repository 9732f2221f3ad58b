/* `exec --cgroup`: an existing sub-cgroup of the container's cgroup, with
 * runc's argument forms.  Each argument is "[CONTROLLER[,CONTROLLER]:]PATH";
 * a bare PATH applies to every hierarchy and must be the only argument;
 * CONTROLLER names a controller of a v1 hierarchy (or a name= hierarchy).
 * PATH is below the container's cgroup whatever its form: "/a" and "a" are
 * the same, ".." is refused (runc's path.Join would let it climb out). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sandrun/util.h"

/* Whether the comma-separated `list` holds the `len` bytes of `name`. */
static bool
list_has (const char *list, const char *name, size_t len)
{
  for (const char *p = list; *p != '\0';)
    {
      size_t n = strcspn (p, ",");
      if (n == len && memcmp (p, name, len) == 0)
        return true;
      p += n + (p[n] == ',');
    }
  return false;
}

/* The argument's controllers: the text before its ':' (NULL: none). */
static char *
arg_controllers (const char *arg)
{
  const char *colon = strchr (arg, ':');
  return colon != NULL ? xstrndup (arg, (size_t) (colon - arg)) : NULL;
}

static int
check_controller (const sr_cgroup *cg, char *const *args, size_t i, const char *ctrl,
                  size_t len, sr_error **err)
{
  bool known = false;

  if (len == 0)
    return sr_fail (err, EINVAL, "--cgroup \"%s\": empty controller", args[i]);
  for (size_t k = 0; k < cg->n; k++)
    known = known || list_has (cg->h[k].key, ctrl, len);
  if (!known)
    return sr_fail (err, EINVAL, "--cgroup \"%s\": unknown controller \"%.*s\"", args[i],
                    (int) len, ctrl);
  for (size_t j = 0; j < i; j++)
    {
      _cleanup_free_ char *earlier = arg_controllers (args[j]);
      if (earlier != NULL && list_has (earlier, ctrl, len))
        return sr_fail (err, EINVAL, "--cgroup: controller \"%.*s\" given twice", (int) len,
                        ctrl);
    }
  return 0;
}

static int
check_args (const sr_cgroup *cg, char *const *args, sr_error **err)
{
  size_t n = strv_len (args);

  for (size_t i = 0; i < n; i++)
    {
      _cleanup_free_ char *ctrls = arg_controllers (args[i]);
      const char *path = ctrls != NULL ? args[i] + strlen (ctrls) + 1 : args[i];
      if (ctrls == NULL && n > 1)
        return sr_fail (err, EINVAL, "--cgroup \"%s\": a path without controller must be "
                        "the only --cgroup", args[i]);
      if (strchr (path, ':') != NULL || path[strspn (path, "/")] == '\0')
        return sr_fail (err, EINVAL, "--cgroup \"%s\": expected [CONTROLLER:]PATH", args[i]);
      for (const char *c = ctrls; c != NULL && *c != '\0';)
        {
          size_t len = strcspn (c, ",");
          if (check_controller (cg, args, i, c, len, err) < 0)
            return -1;
          c += len + (c[len] == ',');
        }
      if (ctrls != NULL && (ctrls[0] == '\0' || ctrls[strlen (ctrls) - 1] == ','))
        return sr_fail (err, EINVAL, "--cgroup \"%s\": empty controller", args[i]);
    }
  return 0;
}

/* The path that `args` give hierarchy `h`, NULL when it keeps the
 * container's. */
static const char *
arg_for (const struct sr_cg_hier *h, char *const *args)
{
  for (size_t i = 0; args[i] != NULL; i++)
    {
      const char *colon = strchr (args[i], ':');
      if (colon == NULL)
        return args[i];
      for (const char *c = args[i]; c < colon;)
        {
          size_t len = strcspn (c, ",:");
          if (list_has (h->key, c, len))
            return colon + 1;
          c += len + 1;
        }
    }
  return NULL;
}

static int
descend (struct sr_cg_hier *h, const char *sub, sr_error **err)
{
  _cleanup_free_ char *rel = NULL;

  if (sr_cg_normalize ("-", sub, &rel, err) < 0)
    return sr_wrap (err, "--cgroup \"%s\"", sub);
  char *path = xasprintf ("%s/%s", strcmp (h->path, "/") == 0 ? "" : h->path,
                          rel + (rel[0] == '/'));
  free (h->path);
  h->path = path;
  sr_close (h->fd);
  h->fd = -1; /* stays so when the sub-cgroup does not exist */
  return sr_cg_open_path (h, err);
}

int
sr_cgroup_open_sub (const char *recorded_path, char *const *subs, sr_cgroup **out,
                    sr_error **err)
{
  _cleanup_cgroup_ sr_cgroup *cg = NULL;

  if (sr_cgroup_open (recorded_path, &cg, err) < 0)
    return -1;
  if (subs != NULL && subs[0] != NULL)
    {
      if (check_args (cg, subs, err) < 0)
        return -1;
      for (size_t i = 0; i < cg->n; i++)
        {
          const char *sub = arg_for (&cg->h[i], subs);
          if (sub != NULL && descend (&cg->h[i], sub, err) < 0)
            return -1;
        }
      free (cg->record);
      cg->record = sr_cg_record_format (cg->h, cg->n);
    }
  *out = steal_pointer (&cg);
  return 0;
}
