/* The state document in runc's shape (`runc state` prints a Go struct with
 * json.MarshalIndent(…, "", "  ")): same keys, same order, same indent. */
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "json.h"
#include "oci-spec/oci-spec.h"
#include "sandrun/jsongen.h"
#include "sandrun/util.h"

static void
gen_field (yajl_gen g, const char *key, const char *value)
{
  sr_json_gen_str (g, key);
  sr_json_gen_str (g, value ? value : "");
}

static void
gen_optional_field (yajl_gen g, const char *key, const char *value)
{
  if (value != NULL)
    gen_field (g, key, value);
}

static void
gen_map (yajl_gen g, const char *key, const oci_map *m)
{
  sr_json_gen_str (g, key);
  yajl_gen_map_open (g);
  for (size_t i = 0; i < m->len; i++)
    gen_field (g, m->v[i].key, m->v[i].value);
  yajl_gen_map_close (g);
}

char *
oci_state_to_json (const oci_state *s)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    return NULL;
  yajl_gen_config (g, yajl_gen_beautify, 1);
  yajl_gen_config (g, yajl_gen_indent_string, "  ");

  yajl_gen_map_open (g);
  gen_field (g, "ociVersion", s->oci_version);
  gen_field (g, "id", s->id);
  sr_json_gen_str (g, "pid");
  yajl_gen_integer (g, s->pid);
  gen_field (g, "status", s->status);
  gen_field (g, "bundle", s->bundle);
  gen_optional_field (g, "rootfs", s->rootfs);
  gen_optional_field (g, "created", s->created);
  if (s->annotations.len > 0)
    gen_map (g, "annotations", &s->annotations);
  gen_optional_field (g, "owner", s->owner);
  yajl_gen_map_close (g);

  return sr_json_gen_take (g, true);
}

oci_state *
oci_state_parse_data (const char *data, size_t len, sr_error **err)
{
  return oj_parse_data (data, len, &oci_state_type, err);
}
