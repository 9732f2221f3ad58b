/* The sandbox options' defaults and the parsers of their values. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "sandrun/util.h"

void
sb_options_init (struct sb_options *o)
{
  memset (o, 0, sizeof *o);
  o->net = xstrdup ("none");
  o->timeout_ms = SB_DEFAULT_TIMEOUT_MS;
  o->memory = SB_DEFAULT_MEMORY;
  o->pids = SB_DEFAULT_PIDS;
  o->output_limit = SB_DEFAULT_OUTPUT_LIMIT;
  o->file_size = SB_DEFAULT_FILE_SIZE;
  o->disk = SB_DEFAULT_DISK;
  o->tmp_size = SB_DEFAULT_TMP_SIZE;
  o->open_files = SB_DEFAULT_OPEN_FILES;
}

void
sb_options_clear (struct sb_options *o)
{
  strv_free (o->argv);
  strv_free (o->env);
  for (size_t i = 0; i < o->ro_binds_len; i++)
    {
      free (o->ro_binds[i].src);
      free (o->ro_binds[i].dst);
    }
  free (o->ro_binds);
  free (o->rootfs);
  free (o->workdir);
  free (o->collect);
  free (o->stdin_file);
  free (o->net);
  free (o->receipt);
  free (o->audit_log);
  memset (o, 0, sizeof *o);
}

/* A non-negative decimal number with an optional fraction, and where its
 * digits end. */
static int
parse_number (const char *s, double *v, const char **end)
{
  char *e;
  if (s == NULL || *s < '0' || *s > '9')
    return -1;
  errno = 0;
  *v = strtod (s, &e);
  if (errno != 0 || !isfinite (*v) || *v < 0)
    return -1;
  *end = e;
  return 0;
}

int
sb_parse_size (const char *s, uint64_t *out)
{
  static const char units[] = "KMGT";
  double v, mult = 1;
  const char *e;

  if (parse_number (s, &v, &e) < 0)
    return -1;
  if (*e != '\0')
    {
      const char *u = strchr (units, e[0] & ~0x20);
      if (u == NULL || e[0] == '\0')
        return -1;
      for (const char *p = units; p <= u; p++)
        mult *= 1024;
      e++;
      if ((*e & ~0x20) == 'I' && (e[1] & ~0x20) == 'B')
        e += 2;
      else if ((*e & ~0x20) == 'B')
        e++;
      if (*e != '\0')
        return -1;
    }
  else if (v != floor (v))
    return -1;
  v *= mult;
  if (v >= 18446744073709551615.0)
    return -1;
  *out = (uint64_t) v;
  return 0;
}

int
sb_parse_duration_ms (const char *s, int64_t *out)
{
  double v, mult = 1000;
  const char *e;

  if (parse_number (s, &v, &e) < 0)
    return -1;
  if (strcmp (e, "ms") == 0)
    mult = 1;
  else if (strcmp (e, "s") == 0 || *e == '\0')
    mult = 1000;
  else if (strcmp (e, "m") == 0)
    mult = 60000;
  else if (strcmp (e, "h") == 0)
    mult = 3600000;
  else
    return -1;
  v *= mult;
  if (v > 1e15)
    return -1;
  *out = (int64_t) llround (v);
  return 0;
}

int
sb_parse_cpus (const char *s, uint64_t *out)
{
  double v;
  const char *e;

  if (parse_number (s, &v, &e) < 0 || *e != '\0' || v > 1024)
    return -1;
  *out = (uint64_t) llround (v * 1000);
  return *out == 0 ? -1 : 0;
}

int
sb_parse_bind (const char *s, struct sb_bind *out, sr_error **err)
{
  const char *colon = strchr (s, ':');
  if (colon == NULL || s[0] != '/' || colon[1] != '/'
      || strchr (colon + 1, ':') != NULL)
    return sr_fail (err, 0, "expected SRC:DST with two absolute paths");
  out->src = xstrndup (s, (size_t) (colon - s));
  out->dst = xstrdup (colon + 1);
  return 0;
}

char *
sb_format_size (uint64_t bytes)
{
  static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
  double v = (double) bytes;
  int u = -1;

  while (v >= 1024 && u < 3)
    {
      v /= 1024;
      u++;
    }
  if (u < 0)
    return xasprintf ("%llu bytes", (unsigned long long) bytes);
  if (v == floor (v))
    return xasprintf ("%.0f %s", v, units[u]);
  return xasprintf ("%.1f %s", v, units[u]);
}

char *
sb_format_duration (int64_t ms)
{
  if (ms < 1000)
    return xasprintf ("%lld ms", (long long) ms);
  if (ms % 1000 == 0)
    return xasprintf ("%lld s", (long long) (ms / 1000));
  return xasprintf ("%.1f s", (double) ms / 1000);
}
