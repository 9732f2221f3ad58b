#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "cmd/cmd.h"
#include "oci-spec/oci-spec.h"
#include "sandrun/container.h"
#include "sandrun/util.h"

struct row
{
  char *cells[6];
};

static const char *const headers[6] = { "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER" };

static void
print_row (char *const *cells, const size_t *width)
{
  for (int col = 0; col < 5; col++)
    printf ("%-*s", (int) width[col], cells[col]);
  printf ("%s\n", cells[5]);
}

/* runc's tabwriter layout: every column but the last is at least 12 wide
 * and padded by 3. */
static void
print_table (struct row *rows, size_t n)
{
  size_t width[6];
  for (int col = 0; col < 6; col++)
    {
      width[col] = strlen (headers[col]) + 3;
      for (size_t i = 0; i < n; i++)
        if (strlen (rows[i].cells[col]) + 3 > width[col])
          width[col] = strlen (rows[i].cells[col]) + 3;
      if (width[col] < 12)
        width[col] = 12;
    }
  print_row ((char *const *) headers, width);
  for (size_t i = 0; i < n; i++)
    print_row (rows[i].cells, width);
}

static void
gen_kv (yajl_gen gen, const char *key, const char *value)
{
  yajl_gen_string (gen, (const unsigned char *) key, strlen (key));
  yajl_gen_string (gen, (const unsigned char *) (value ? value : ""), value ? strlen (value) : 0);
}

static void
gen_container (yajl_gen gen, const struct sr_container_info *c)
{
  yajl_gen_map_open (gen);
  gen_kv (gen, "ociVersion", OCI_SPEC_VERSION);
  gen_kv (gen, "id", c->id);
  yajl_gen_string (gen, (const unsigned char *) "pid", 3);
  yajl_gen_integer (gen, c->pid);
  gen_kv (gen, "status", sr_status_name (c->status));
  gen_kv (gen, "bundle", c->bundle);
  gen_kv (gen, "rootfs", c->rootfs);
  gen_kv (gen, "created", c->created);
  gen_kv (gen, "owner", c->owner);
  if (c->annotations.len > 0)
    {
      yajl_gen_string (gen, (const unsigned char *) "annotations", 11);
      yajl_gen_map_open (gen);
      for (size_t i = 0; i < c->annotations.len; i++)
        gen_kv (gen, c->annotations.v[i].key, c->annotations.v[i].value);
      yajl_gen_map_close (gen);
    }
  yajl_gen_map_close (gen);
}

static const struct option list_options[] = {
  { "quiet", no_argument, NULL, 'q' },
  { "format", required_argument, NULL, 'f' },
  { NULL, 0, NULL, 0 },
};

int
cmd_list (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  bool quiet = false, json = false;
  int c;

  opterr = 0;
  while ((c = getopt_long (argc, argv, "+qf:", list_options, NULL)) != -1)
    switch (c)
      {
      case 'q': quiet = true; break;
      case 'f':
        if (strcmp (optarg, "json") != 0 && strcmp (optarg, "table") != 0)
          return sr_fail (err, EINVAL, "list: --format: expected table or json"), 1;
        json = strcmp (optarg, "json") == 0;
        break;
      default:
        return sr_fail (err, EINVAL, "list: unknown option \"%s\"", argv[optind - 1]), 1;
      }

  struct sr_container_info *list = NULL;
  size_t n = 0;
  if (sr_container_list (g, &list, &n, err) < 0)
    return 1;

  yajl_gen gen = yajl_gen_alloc (NULL);
  yajl_gen_array_open (gen);
  struct row *rows = xcalloc (n, sizeof *rows);
  for (size_t i = 0; i < n; i++)
    {
      const struct sr_container_info *ct = &list[i];
      if (quiet)
        printf ("%s\n", ct->id);
      else if (json)
        gen_container (gen, ct);
      else
        {
          struct row *r = &rows[i];
          r->cells[0] = xstrdup (ct->id);
          r->cells[1] = xasprintf ("%d", (int) ct->pid);
          r->cells[2] = xstrdup (sr_status_name (ct->status));
          r->cells[3] = xstrdup (ct->bundle ? ct->bundle : "");
          r->cells[4] = xstrdup (ct->created ? ct->created : "");
          r->cells[5] = xstrdup (ct->owner ? ct->owner : "");
        }
    }
  yajl_gen_array_close (gen);
  if (json)
    {
      const unsigned char *buf;
      size_t len;
      yajl_gen_get_buf (gen, &buf, &len);
      printf ("%.*s\n", (int) len, buf);
    }
  else if (!quiet)
    print_table (rows, n);
  yajl_gen_free (gen);
  for (size_t i = 0; i < n; i++)
    for (int col = 0; col < 6; col++)
      free (rows[i].cells[col]);
  free (rows);
  sr_container_list_free (list, n);
  return 0;
}
