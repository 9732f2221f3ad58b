/* The features document (see features.h), generated with yajl from the
 * parsers' own tables. */
#include <errno.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "linux_attrs_internal.h"
#include "oci-spec/oci-spec.h"
#include "core/cgroup/cgroup_systemd.h"
#include "sandrun/features.h"
#include "sandrun/jsongen.h"
#include "core/mountopt.h"
#include "core/namespaces.h"
#include "core/process.h"
#include "core/seccomp.h"
#include "sandrun/util.h"

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

static const char *const hook_kinds[] = {
  "prestart",       "createRuntime", "createContainer",
  "startContainer", "poststart",     "poststop",
};

/* ---- yajl helpers ---- */

static void
gen_bool_field (yajl_gen g, const char *key, bool v)
{
  sr_json_gen_str (g, key);
  yajl_gen_bool (g, v);
}

/* {"enabled": v} under `key`. */
static void
gen_enabled (yajl_gen g, const char *key, bool v)
{
  sr_json_gen_str (g, key);
  yajl_gen_map_open (g);
  gen_bool_field (g, "enabled", v);
  yajl_gen_map_close (g);
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* A sorted string array under `key` (runc sorts its lists too). */
static void
gen_list (yajl_gen g, const char *key, const char **v, size_t n, bool sort)
{
  if (sort)
    qsort (v, n, sizeof *v, cmp_str);
  sr_json_gen_str (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    sr_json_gen_str (g, v[i]);
  yajl_gen_array_close (g);
}

/* A growable list of borrowed names. */
struct names
{
  const char **v;
  size_t n;
};

static void
names_add (struct names *l, const char *s)
{
  l->v = xrealloc (l->v, (l->n + 1) * sizeof *l->v);
  l->v[l->n++] = s;
}

/* Every name an accessor `name_at (i)` gives until NULL, but those for
 * which `works (i)`, when given, is false. */
static void
gen_table_if (yajl_gen g, const char *key, const char *(*name_at) (size_t),
              bool (*works) (size_t), bool sort)
{
  struct names l = { 0 };
  for (size_t i = 0; name_at (i) != NULL; i++)
    if (works == NULL || works (i))
      names_add (&l, name_at (i));
  gen_list (g, key, l.v, l.n, sort);
  free (l.v);
}

static void
gen_table (yajl_gen g, const char *key, const char *(*name_at) (size_t),
           bool sort)
{
  gen_table_if (g, key, name_at, NULL, sort);
}

/* ---- sections ---- */

static void
gen_mount_options (yajl_gen g)
{
  struct names l = { 0 };
  const char *name;
  bool ok;

  for (size_t i = 0; (name = sr_mount_opt_name (i, &ok)) != NULL; i++)
    if (ok)
      names_add (&l, name);
  gen_list (g, "mountOptions", l.v, l.n, true);
  free (l.v);
}

static bool
mount_option_supported (const char *want)
{
  const char *name;
  bool ok;

  for (size_t i = 0; (name = sr_mount_opt_name (i, &ok)) != NULL; i++)
    if (strcmp (name, want) == 0)
      return ok;
  return false;
}

/* The kernel checks the flags before it reads the (NULL) program: EFAULT
 * means it would take them.  Nothing is installed. */
static bool
seccomp_flag_supported (unsigned int flag)
{
  if (flag & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
    flag |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
  return syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, flag, NULL) < 0
         && errno == EFAULT;
}

static void
gen_seccomp_archs (yajl_gen g)
{
  struct names l = { 0 };
  const char *name;
  bool usable;

  for (size_t i = 0; (name = sr_seccomp_arch_name (i, &usable)) != NULL; i++)
    if (usable)
      names_add (&l, name);
  gen_list (g, "archs", l.v, l.n, true);
  free (l.v);
}

static void
gen_seccomp_flags (yajl_gen g)
{
  struct names known = { 0 }, supported = { 0 };
  const char *name;
  unsigned int flag;

  for (size_t i = 0; (name = sr_seccomp_flag_name (i, &flag)) != NULL; i++)
    {
      names_add (&known, name);
      if (seccomp_flag_supported (flag))
        names_add (&supported, name);
    }
  gen_list (g, "knownFlags", known.v, known.n, true);
  gen_list (g, "supportedFlags", supported.v, supported.n, true);
  free (known.v);
  free (supported.v);
}

static void
gen_seccomp (yajl_gen g)
{
  sr_json_gen_str (g, "seccomp");
  yajl_gen_map_open (g);
  gen_bool_field (g, "enabled", true);
  gen_table (g, "actions", sr_seccomp_action_name, true);
  gen_table (g, "operators", sr_seccomp_operator_name, true);
  gen_seccomp_archs (g);
  gen_seccomp_flags (g);
  yajl_gen_map_close (g);
}

static void
gen_cgroup (yajl_gen g)
{
  sr_json_gen_str (g, "cgroup");
  yajl_gen_map_open (g);
  gen_bool_field (g, "v1", true);
  gen_bool_field (g, "v2", true);
  gen_bool_field (g, "systemd", sr_cgroup_systemd_built ());
  gen_bool_field (g, "systemdUser", false); /* root's system bus only */
  gen_bool_field (g, "rdma", true);
  yajl_gen_map_close (g);
}

static void
gen_linux (yajl_gen g)
{
  sr_json_gen_str (g, "linux");
  yajl_gen_map_open (g);
  gen_table (g, "namespaces", sr_ns_type_name, true);
  gen_table (g, "capabilities", sr_cap_name_at, false);
  gen_cgroup (g);
  gen_seccomp (g);
  gen_enabled (g, "apparmor", true);
  gen_enabled (g, "selinux", false);
  gen_enabled (g, "intelRdt", false);
  sr_json_gen_str (g, "memoryPolicy");
  yajl_gen_map_open (g);
  /* What this kernel takes: the modes are newer than some kernels. */
  gen_table_if (g, "modes", sr_memory_policy_mode_name,
                sr_memory_policy_mode_works, true);
  gen_table_if (g, "flags", sr_memory_policy_flag_name,
                sr_memory_policy_flag_works, true);
  yajl_gen_map_close (g);
  sr_json_gen_str (g, "mountExtensions");
  yajl_gen_map_open (g);
  gen_enabled (g, "idmap", mount_option_supported ("idmap"));
  yajl_gen_map_close (g);
  gen_enabled (g, "netDevices", true);
  yajl_gen_map_close (g);
}

static void
gen_annotations (yajl_gen g)
{
  const struct scmp_version *v = seccomp_version ();
  _cleanup_free_ char *libseccomp
      = xasprintf ("%u.%u.%u", v->major, v->minor, v->micro);

  sr_json_gen_str (g, "annotations");
  yajl_gen_map_open (g);
  sr_json_gen_str (g, "io.github.seccomp.libseccomp.version");
  sr_json_gen_str (g, libseccomp);
  sr_json_gen_str (g, "run.oci.sandrun.version");
  sr_json_gen_str (g, PACKAGE_VERSION);
  yajl_gen_map_close (g);
}

/* yajl indents an empty array over three lines: "[]" as runc prints it. */
static char *
collapse_empty_arrays (const unsigned char *buf, size_t len)
{
  char *out = xmalloc (len + 2), *o = out;

  for (size_t i = 0; i < len; i++)
    {
      *o++ = (char) buf[i];
      if (buf[i] != '[')
        continue;
      size_t j = i + 1;
      while (j < len && strchr (" \n", buf[j]) != NULL)
        j++;
      if (j < len && buf[j] == ']')
        i = j - 1;
    }
  if (o == out || o[-1] != '\n')
    *o++ = '\n';
  *o = '\0';
  return out;
}

char *
sr_features_json (void)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  const unsigned char *buf;
  size_t len;

  yajl_gen_config (g, yajl_gen_beautify, 1);
  yajl_gen_config (g, yajl_gen_indent_string, "    ");
  yajl_gen_map_open (g);
  sr_json_gen_str (g, "ociVersionMin");
  sr_json_gen_str (g, "1.0.0");
  sr_json_gen_str (g, "ociVersionMax");
  sr_json_gen_str (g, OCI_SPEC_VERSION);
  gen_list (g, "hooks", (const char **) hook_kinds, ARRAY_SIZE (hook_kinds),
            false);
  gen_mount_options (g);
  gen_linux (g);
  gen_annotations (g);
  gen_list (g, "potentiallyUnsafeConfigAnnotations", NULL, 0, false);
  yajl_gen_map_close (g);
  yajl_gen_get_buf (g, &buf, &len);
  char *out = collapse_empty_arrays (buf, len);
  yajl_gen_free (g);
  return out;
}
