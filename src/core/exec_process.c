/* The process an exec runs: the container's process with runc's exec
 * overrides, or a --process file with what it leaves unset taken from the
 * container (runc's newInitConfig). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "exec_internal.h"
#include "oci-spec/oci-spec.h"
#include "sandrun/util.h"

/* -e KEY=VALUE replaces KEY where the container sets it (in place, as
 * runc's environment ends up), else it is added. */
static int
env_set (char ***env, const char *entry, sr_error **err)
{
  const char *eq = strchr (entry, '=');

  if (eq == NULL || eq == entry)
    return sr_fail (err, EINVAL, "invalid environment variable \"%s\": expected KEY=VALUE",
                    entry);
  size_t key_len = (size_t) (eq - entry) + 1; /* with the '=' */
  for (size_t i = 0; (*env)[i] != NULL; i++)
    if (strncmp ((*env)[i], entry, key_len) == 0)
      {
        free ((*env)[i]);
        (*env)[i] = xstrdup (entry);
        return 0;
      }
  strv_append (env, entry);
  return 0;
}

static void
append_unique (char ***v, const char *s)
{
  for (size_t i = 0; *v != NULL && (*v)[i] != NULL; i++)
    if (strcmp ((*v)[i], s) == 0)
      return;
  strv_append (v, s);
}

/* "CAP_SYS_ADMIN", "SYS_ADMIN" and "sys_admin" all name CAP_SYS_ADMIN; the
 * capability code rejects what is not a capability name. */
static char *
cap_name (const char *s)
{
  char *name = strncasecmp (s, "CAP_", 4) == 0 ? xstrdup (s) : xasprintf ("CAP_%s", s);
  for (char *c = name; *c; c++)
    *c = (char) toupper ((unsigned char) *c);
  return name;
}

static void
add_caps (const oci_capabilities *base, char **names, oci_capabilities *out)
{
  if (base != NULL)
    {
      out->bounding = strv_dup (base->bounding);
      out->effective = strv_dup (base->effective);
      out->permitted = strv_dup (base->permitted);
      out->inheritable = strv_dup (base->inheritable);
      out->ambient = strv_dup (base->ambient);
    }
  for (size_t i = 0; names[i] != NULL; i++)
    {
      _cleanup_free_ char *name = cap_name (names[i]);
      append_unique (&out->bounding, name);
      append_unique (&out->effective, name);
      append_unique (&out->permitted, name);
    }
}

static uint32_t *
add_gids (const oci_user *u, const uint32_t *more, size_t n_more, size_t *n)
{
  uint32_t *gids = xcalloc (u->additional_gids_len + n_more + 1, sizeof *gids);
  size_t k = 0;

  for (size_t i = 0; i < u->additional_gids_len; i++)
    gids[k++] = u->additional_gids[i];
  for (size_t i = 0; i < n_more; i++)
    gids[k++] = more[i];
  *n = k;
  return gids;
}

/* runc's exec flags over a copy of the container's process. */
static int
from_flags (const oci_process *base, const struct sr_exec_opts *o, struct sr_exec_process *x,
            sr_error **err)
{
  oci_process *p = &x->p;

  if (o->args == NULL || o->args[0] == NULL)
    return sr_fail (err, EINVAL, "process args cannot be empty");
  *p = *base;
  p->args = o->args;
  p->terminal = o->tty;
  if (o->cwd != NULL && o->cwd[0] != '\0')
    p->cwd = (char *) o->cwd;
  x->env = strv_dup (base->env);
  for (size_t i = 0; o->env != NULL && o->env[i] != NULL; i++)
    if (env_set (&x->env, o->env[i], err) < 0)
      return -1;
  p->env = x->env;
  if (o->caps != NULL && o->caps[0] != NULL)
    {
      add_caps (base->capabilities, o->caps, &x->caps);
      p->capabilities = &x->caps;
    }
  if (o->uid_set)
    p->user.uid = o->uid;
  if (o->gid_set)
    p->user.gid = o->gid;
  if (o->additional_gids_len > 0)
    {
      x->gids = add_gids (&base->user, o->additional_gids, o->additional_gids_len,
                          &p->user.additional_gids_len);
      p->user.additional_gids = x->gids;
    }
  if (o->no_new_privs)
    p->no_new_privileges = true;
  if (o->apparmor != NULL && o->apparmor[0] != '\0')
    p->apparmor_profile = (char *) o->apparmor;
  if (o->process_label != NULL && o->process_label[0] != '\0')
    p->selinux_label = (char *) o->process_label;
  return 0;
}

/* --process: the file's process; what it leaves unset is the container's. */
static int
from_file (const oci_process *base, const char *path, struct sr_exec_process *x, sr_error **err)
{
  _cleanup_free_ char *data = NULL;
  size_t len;
  oci_process *p = &x->p;

  if (sr_read_file_at (AT_FDCWD, path, OCI_MAX_DOCUMENT_SIZE, &data, &len, err) < 0)
    return sr_wrap (err, "process file");
  x->file = oci_process_parse_data (data, len, err);
  if (x->file == NULL)
    return sr_wrap (err, "process file \"%s\"", path);
  *p = *x->file;
  if (p->args == NULL || p->args[0] == NULL)
    return sr_fail (err, EINVAL, "process file \"%s\": args must not be empty", path);
  if (p->cwd == NULL || p->cwd[0] != '/')
    return sr_fail (err, EINVAL, "process file \"%s\": cwd must be an absolute path", path);
  if (p->capabilities == NULL)
    p->capabilities = base->capabilities;
  if (p->rlimits_len == 0)
    {
      p->rlimits = base->rlimits;
      p->rlimits_len = base->rlimits_len;
    }
  if (p->apparmor_profile == NULL || p->apparmor_profile[0] == '\0')
    p->apparmor_profile = base->apparmor_profile;
  if (p->selinux_label == NULL || p->selinux_label[0] == '\0')
    p->selinux_label = base->selinux_label;
  if (!p->oom_score_adj.set)
    p->oom_score_adj = base->oom_score_adj;
  return 0;
}

int
sr_exec_process_make (const oci_process *base, const struct sr_exec_opts *opts,
                      struct sr_exec_process *out, sr_error **err)
{
  memset (out, 0, sizeof *out);
  if (opts->process_file != NULL)
    return from_file (base, opts->process_file, out, err);
  return from_flags (base, opts, out, err);
}

void
sr_exec_process_clear (struct sr_exec_process *x)
{
  if (x->file != NULL)
    oci_process_free (x->file);
  strv_free (x->env);
  strv_free (x->caps.bounding);
  strv_free (x->caps.effective);
  strv_free (x->caps.permitted);
  strv_free (x->caps.inheritable);
  strv_free (x->caps.ambient);
  free (x->gids);
  memset (x, 0, sizeof *x);
}
