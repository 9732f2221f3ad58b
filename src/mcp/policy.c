/* `sandrun mcp [sandbox OPTIONS]`: the policy of every execution the server
 * runs.  The options are the sandbox's; a few are read here as well, to
 * describe the constraints to the model and to cap what a call may ask. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp.h"
#include "sandrun/util.h"

enum opt_use
{
  PASS,    /* to every sandbox */
  SESSION, /* to `sandbox start` only */
  TIMEOUT, /* kept by the server: the cap */
  RUNTIME, /* the server's own */
  REFUSED, /* set by the server for each call */
};

struct opt
{
  const char *name;
  enum opt_use use;
  size_t field; /* offsetof a const char * in mcp_policy, or 0 */
};

#define F(m) offsetof (struct mcp_policy, m)
static const struct opt opts[] = {
  { "--rootfs", PASS, F (rootfs) },
  { "--ro-bind", PASS, 0 },
  { "--env", PASS, 0 },
  { "--memory", PASS, F (memory) },
  { "--cpus", PASS, F (cpus) },
  { "--cpu-time", PASS, 0 },
  { "--pids", PASS, F (pids) },
  { "--output-limit", PASS, F (output_limit) },
  { "--file-size", PASS, 0 },
  { "--disk", PASS, F (disk) },
  { "--tmp-size", PASS, 0 },
  { "--open-files", PASS, 0 },
  { "--net", PASS, 0 },
  { "--allow-host", PASS, 0 },
  { "--audit-log", PASS, 0 },
  { "--idle-timeout", SESSION, 0 },
  { "--max-lifetime", SESSION, 0 },
  { "--timeout", TIMEOUT, 0 },
  { "--runtime", RUNTIME, 0 },
  { "--workdir", REFUSED, 0 },
  { "--collect", REFUSED, 0 },
  { "--receipt", REFUSED, 0 },
  { "--stdin", REFUSED, 0 },
};
#undef F

long
mcp_parse_duration_ms (const char *s)
{
  char *end = NULL;
  errno = 0;
  double v = strtod (s, &end);
  if (errno != 0 || end == s || !(v >= 0) || v > 86400.0 * 365)
    return -1;
  if (strcmp (end, "ms") == 0)
    return (long) v;
  if (*end == '\0' || strcmp (end, "s") == 0)
    return (long) (v * 1000);
  if (strcmp (end, "m") == 0)
    return (long) (v * 60000);
  if (strcmp (end, "h") == 0)
    return (long) (v * 3600000);
  return -1;
}

char *
mcp_format_ms (long ms)
{
  if (ms % 1000 == 0)
    return xasprintf ("%lds", ms / 1000);
  return xasprintf ("%ldms", ms);
}

static const struct opt *
find_opt (const char *name, size_t n)
{
  for (size_t i = 0; i < ARRAY_SIZE (opts); i++)
    if (strlen (opts[i].name) == n && strncmp (opts[i].name, name, n) == 0)
      return &opts[i];
  return NULL;
}

/* The interpreters of the root the executions see. */
static void
find_interpreters (struct mcp_policy *p)
{
  const char *root = p->rootfs != NULL ? p->rootfs : "";
  _cleanup_free_ char *py = xasprintf ("%s/usr/bin/python3", root);
  _cleanup_free_ char *sh = xasprintf ("%s/bin/sh", root);
  _cleanup_free_ char *ush = xasprintf ("%s/usr/bin/sh", root);
  p->has_python = access (py, X_OK) == 0;
  p->has_shell = access (sh, F_OK) == 0 || access (ush, F_OK) == 0;
}

static int
take_opt (struct mcp_policy *p, const struct opt *o, const char *val,
          const char **runtime, sr_error **err)
{
  switch (o->use)
    {
    case REFUSED:
      return sr_fail (err, 0, "mcp: %s is set by the server for each call",
                      o->name);
    case RUNTIME:
      *runtime = val;
      return 0;
    case TIMEOUT:
      p->timeout_ms = mcp_parse_duration_ms (val);
      if (p->timeout_ms <= 0)
        return sr_fail (
            err, 0, "mcp: --timeout \"%s\": expected a duration such as 10s",
            val);
      return 0;
    case SESSION:
      strv_append (&p->session_opts, o->name);
      strv_append (&p->session_opts, val);
      return 0;
    case PASS:
      strv_append (&p->sandbox_opts, o->name);
      strv_append (&p->sandbox_opts, val);
      if (strcmp (o->name, "--allow-host") == 0)
        strv_append (&p->allow_hosts, val);
      if (o->field != 0)
        *(const char **) ((char *) p + o->field) = val;
      return 0;
    }
  return 0;
}

int
mcp_policy_parse (int argc, char **argv, struct mcp_policy *p,
                  const char **runtime, sr_error **err)
{
  *p = (struct mcp_policy){ .timeout_ms = 10000 };
  *runtime = NULL;
  p->sandbox_opts = xcalloc (1, sizeof (char *));
  p->session_opts = xcalloc (1, sizeof (char *));
  p->allow_hosts = xcalloc (1, sizeof (char *));
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      const char *eq = strchr (a, '=');
      size_t n = eq != NULL ? (size_t) (eq - a) : strlen (a);
      const struct opt *o = str_has_prefix (a, "--") ? find_opt (a, n) : NULL;
      if (!str_has_prefix (a, "-"))
        return sr_fail (
            err, 0, "mcp: unexpected operand \"%s\" (it takes options only)",
            a);
      if (o == NULL)
        return sr_fail (
            err, 0, "mcp: unknown option \"%s\" (see sandrun mcp --help)", a);
      const char *val
          = eq != NULL ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
      if (val == NULL)
        return sr_fail (err, 0, "mcp: %s needs a value", o->name);
      if (take_opt (p, o, val, runtime, err) < 0)
        return -1;
    }
  find_interpreters (p);
  return 0;
}

void
mcp_policy_free (struct mcp_policy *p)
{
  strv_free (p->sandbox_opts);
  strv_free (p->session_opts);
  strv_free (p->allow_hosts);
  *p = (struct mcp_policy){ 0 };
}

char *
mcp_policy_describe (const struct mcp_policy *p)
{
  _cleanup_free_ char *t = mcp_format_ms (p->timeout_ms);
  char *s = NULL;
  size_t n = 0;
  FILE *f = open_memstream (&s, &n);
  if (f == NULL)
    abort ();
  fprintf (f,
           "Constraints: wall-clock timeout %s at most; memory %s (no swap); "
           "at most %s processes; output %s per stream (more ends the run); "
           "disk %s",
           t, p->memory ? p->memory : "256M", p->pids ? p->pids : "64",
           p->output_limit ? p->output_limit : "1M",
           p->disk ? p->disk : "256M");
  if (p->cpus != NULL)
    fprintf (f, "; %s CPUs", p->cpus);
  if (p->allow_hosts[0] == NULL)
    fputs ("; no network access (loopback only)", f);
  for (size_t i = 0; p->allow_hosts[i] != NULL; i++)
    fprintf (f, i == 0 ? "; network only to %s" : ", %s", p->allow_hosts[i]);
  fprintf (
      f,
      "; interpreters: %s, %s; root filesystem: %s, read-only; /work and /tmp "
      "writable.",
      p->has_python ? "python3" : "no python3", p->has_shell ? "sh" : "no sh",
      p->rootfs ? p->rootfs : "the host's system directories");
  fclose (f);
  return s;
}
