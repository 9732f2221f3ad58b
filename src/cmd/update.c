#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "oci-spec/oci-spec.h"
#include "sandrun/container_ops.h"
#include "sandrun/jsongen.h"
#include "sandrun/util.h"

#define USAGE "[-r resources.json|-] [resource options] <container-id>"

enum kind
{
  K_UINT,   /* decimal, unsigned */
  K_INT,    /* decimal, signed */
  K_MEMORY, /* a size with an optional unit ("10M", "1.5g", "512KiB") or -1 */
  K_STRING,
};

/* One flag: where its value goes in linux.resources. */
struct flag
{
  const char *name;
  const char *section;
  const char *key;
  enum kind kind;
};

static const struct flag flags[] = {
  { "blkio-weight", "blockIO", "weight", K_UINT },
  { "cpu-period", "cpu", "period", K_UINT },
  { "cpu-quota", "cpu", "quota", K_INT },
  { "cpu-burst", "cpu", "burst", K_UINT },
  { "cpu-share", "cpu", "shares", K_UINT },
  { "cpu-rt-period", "cpu", "realtimePeriod", K_UINT },
  { "cpu-rt-runtime", "cpu", "realtimeRuntime", K_INT },
  { "cpuset-cpus", "cpu", "cpus", K_STRING },
  { "cpuset-mems", "cpu", "mems", K_STRING },
  { "cpu-idle", "cpu", "idle", K_INT },
  { "memory", "memory", "limit", K_MEMORY },
  { "memory-reservation", "memory", "reservation", K_MEMORY },
  { "memory-swap", "memory", "swap", K_MEMORY },
  { "kernel-memory", "memory", "kernel", K_MEMORY },
  { "kernel-memory-tcp", "memory", "kernelTCP", K_MEMORY },
  { "pids-limit", "pids", "limit", K_INT },
};
#define NFLAGS (sizeof flags / sizeof flags[0])

enum
{
  OPT_L3 = 1000,
  OPT_MEMBW,
};

#define FLAG_BASE 2000

/* The fixed options, then one per entry of flags[] (val FLAG_BASE + i). */
static void
build_options (struct option *o)
{
  static const struct option fixed[] = {
    { "resources", required_argument, NULL, 'r' },
    { "l3-cache-schema", required_argument, NULL, OPT_L3 },
    { "mem-bw-schema", required_argument, NULL, OPT_MEMBW },
  };
  size_t n = 0;
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    o[n++] = fixed[i];
  for (size_t i = 0; i < NFLAGS; i++)
    o[n++] = (struct option){ flags[i].name, required_argument, NULL,
                              FLAG_BASE + (int) i };
  o[n] = (struct option){ NULL, 0, NULL, 0 };
}

/* docker/go-units RAMInBytes, which runc uses: "<number>[ ][kmgtp][i][b]",
 * any case, binary multiples. */
static int
parse_memory (const char *s, long long *out)
{
  static const char units[] = "kmgtp";
  if (strcmp (s, "-1") == 0)
    {
      *out = -1;
      return 0;
    }
  const char *p = s;
  size_t n = strspn (p, "0123456789");
  if (n == 0)
    return -1;
  p += n;
  if (*p == '.')
    {
      n = strspn (p + 1, "0123456789");
      if (n == 0)
        return -1;
      p += n + 1;
    }
  double v = strtod (s, NULL);
  if (*p == ' ')
    p++;
  const char *u = *p ? strchr (units, *p | 0x20) : NULL;
  if (u != NULL)
    {
      for (const char *k = units; k <= u; k++)
        v *= 1024;
      p++;
    }
  if (*p == 'i' || *p == 'I')
    p++;
  if (*p == 'b' || *p == 'B')
    p++;
  if (*p != '\0' || v >= 9.2e18)
    return -1;
  *out = (long long) v;
  return 0;
}

static int
check_value (const struct flag *f, const char *v, char **json, sr_error **err)
{
  long l;
  long long ll;
  unsigned long long u;
  switch (f->kind)
    {
    case K_UINT:
      if (sr_parse_u64 (v, &u) < 0)
        break;
      *json = xasprintf ("%llu", u);
      return 0;
    case K_INT:
      if (sr_parse_long (v, &l) < 0)
        break;
      *json = xasprintf ("%ld", l);
      return 0;
    case K_MEMORY:
      if (parse_memory (v, &ll) < 0)
        break;
      *json = xasprintf ("%lld", ll);
      return 0;
    case K_STRING:
      *json = NULL;
      return 0;
    }
  return sr_fail (err, 0, "update: invalid value \"%s\" for --%s", v,
                  f->name);
}

/* The flags given, as a linux.resources object.  `values[i]` is the
 * argument of flags[i] (NULL when not given), `numbers[i]` its JSON. */
static char *
flags_to_json (char *const *values, char *const *numbers)
{
  static const char *const sections[] = { "memory", "cpu", "blockIO", "pids" };
  yajl_gen g = sr_json_gen_new (false);
  yajl_gen_map_open (g);
  for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++)
    {
      bool open = false;
      for (size_t i = 0; i < NFLAGS; i++)
        {
          if (values[i] == NULL || strcmp (flags[i].section, sections[s]) != 0)
            continue;
          if (!open)
            {
              sr_json_gen_str (g, sections[s]);
              yajl_gen_map_open (g);
              open = true;
            }
          sr_json_gen_str (g, flags[i].key);
          if (numbers[i] != NULL)
            yajl_gen_number (g, numbers[i], strlen (numbers[i]));
          else
            sr_json_gen_str (g, values[i]);
        }
      if (open)
        yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
  return sr_json_gen_take (g, false);
}

static char *
read_resources (const char *path, size_t *len, sr_error **err)
{
  char *data = NULL;
  /* "-": stdin, whatever it is (a pipe, a file, a socket). */
  if (strcmp (path, "-") != 0)
    return sr_read_file_at (AT_FDCWD, path, OCI_MAX_DOCUMENT_SIZE, &data, len,
                            err) < 0 ? NULL : data;
  size_t cap = 0;
  *len = 0;
  for (;;)
    {
      if (*len == cap)
        {
          if (cap >= OCI_MAX_DOCUMENT_SIZE)
            return free (data), sr_fail (err, EFBIG, "read stdin"), NULL;
          cap = cap ? cap * 2 : 4096;
          data = xrealloc (data, cap + 1);
        }
      size_t n = fread (data + *len, 1, cap - *len, stdin);
      *len += n;
      if (n == 0)
        break;
    }
  if (ferror (stdin))
    return free (data), sr_fail (err, EIO, "read stdin"), NULL;
  data[*len] = '\0';
  return data;
}

/* The resource flags given (values[i] for flags[i], NULL if absent) as a
 * linux.resources object, or NULL with *err set. */
static char *
flags_json (char *const *values, sr_error **err)
{
  char *numbers[NFLAGS] = { 0 };
  char *json = NULL;
  size_t i = 0;
  for (; i < NFLAGS; i++)
    if (values[i] != NULL
        && check_value (&flags[i], values[i], &numbers[i], err) < 0)
      break;
  if (i == NFLAGS)
    json = flags_to_json (values, numbers);
  for (i = 0; i < NFLAGS; i++)
    free (numbers[i]);
  return json;
}

int
cmd_update (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  struct sr_update_opts opts = { 0 };
  const char *file = NULL;
  char *values[NFLAGS] = { 0 };
  struct option options[NFLAGS + 4];
  int c;

  build_options (options);
  opterr = 0;
  /* No "+": options may follow the id too (`update web --memory 64M`), as
   * runc takes them. */
  while ((c = getopt_long (argc, argv, "r:", options, NULL)) != -1)
    {
      if (c == 'r')
        file = optarg;
      else if (c == OPT_L3)
        opts.l3_cache_schema = optarg;
      else if (c == OPT_MEMBW)
        opts.mem_bw_schema = optarg;
      else if (c >= FLAG_BASE && (size_t) (c - FLAG_BASE) < NFLAGS)
        values[c - FLAG_BASE] = optarg;
      else
        {
          sr_fail (err, 0, "update: unknown option \"%s\" (usage: sandrun "
                   "update " USAGE ")", argv[optind - 1]);
          return 1;
        }
    }
  if (cmd_expect_operands ("update", argc, argv, optind, 1, USAGE, err) < 0)
    return 1;

  _cleanup_free_ char *json = NULL;
  size_t len = 0;
  if (file != NULL)
    {
      /* As runc: with -r, the resource flags are ignored. */
      json = read_resources (file, &len, err);
      if (json == NULL)
        return sr_wrap (err, "update: --resources \"%s\"", file), 1;
    }
  else
    {
      json = flags_json (values, err);
      if (json == NULL)
        return 1;
      len = strlen (json);
    }
  opts.resources = json;
  opts.resources_len = len;
  return sr_container_update (g, argv[optind], &opts, err) < 0 ? 1 : 0;
}
