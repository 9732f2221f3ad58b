/* `update` rewrites linux.resources inside the container's saved
 * config.json.  sandrun has no serialiser for the whole config model, and
 * none is needed: the document is edited as a JSON tree, so every field it
 * had (known to sandrun or not) survives unchanged. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "json.h"
#include "sandrun/container_ops.h"
#include "sandrun/jsongen.h"
#include "sandrun/util.h"

#define MAX_PATCHES 3

/* Whether `key` is one of the first `n` keys of `obj`: a repeated key is
 * written once (with its last value, as oj_member reads it). */
static bool
seen_before (yajl_val obj, size_t n, const char *key)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      return true;
  return false;
}

enum skip
{
  SKIP_NONE,
  SKIP_PATCH_DEVICES, /* the config keeps its devices, the patch's go */
  SKIP_ALL_DEVICES,   /* what is applied: no device rules at all */
};

static void gen_merged (yajl_gen g, yajl_val *vals, size_t n, enum skip skip);

/* Merge one key of the objects vals[0..n) (those that have it). */
static void
gen_merged_key (yajl_gen g, yajl_val *vals, size_t n, const char *key,
                enum skip skip)
{
  bool devices = strcmp (key, "devices") == 0;
  if (devices && skip == SKIP_ALL_DEVICES)
    return;
  yajl_val kids[MAX_PATCHES + 1];
  size_t nk = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (devices && skip == SKIP_PATCH_DEVICES && i > 0)
        break;
      yajl_val kid = oj_member (vals[i], key);
      if (kid != NULL)
        kids[nk++] = kid;
    }
  if (nk == 0)
    return;
  sr_json_gen_str (g, key);
  gen_merged (g, kids, nk, SKIP_NONE);
}

/* vals[0] is the base, the others patch it in order (none is NULL). */
static void
gen_merged (yajl_gen g, yajl_val *vals, size_t n, enum skip skip)
{
  /* Only a trailing run of objects merges; anything else replaces what
   * came before it. */
  size_t first = n - 1;
  if (!YAJL_IS_OBJECT (vals[first]))
    {
      sr_json_gen_value (g, vals[first]);
      return;
    }
  while (first > 0 && YAJL_IS_OBJECT (vals[first - 1]))
    first--;
  vals += first;
  n -= first;
  yajl_gen_map_open (g);
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < vals[i]->u.object.len; k++)
      {
        const char *key = vals[i]->u.object.keys[k];
        bool earlier = seen_before (vals[i], k, key);
        for (size_t j = 0; j < i && !earlier; j++)
          earlier = seen_before (vals[j], vals[j]->u.object.len, key);
        if (!earlier)
          gen_merged_key (g, vals, n, key, skip);
      }
  yajl_gen_map_close (g);
}

/* Copy `v`, with the value at `path` (objects created as needed) being
 * `replacement`. */
static void
gen_replacing (yajl_gen g, yajl_val v, const char *const *path,
               yajl_val replacement)
{
  if (path[0] == NULL)
    {
      sr_json_gen_value (g, replacement);
      return;
    }
  bool done = false;
  yajl_gen_map_open (g);
  for (size_t i = 0; v != NULL && YAJL_IS_OBJECT (v) && i < v->u.object.len; i++)
    {
      const char *key = v->u.object.keys[i];
      if (seen_before (v, i, key))
        continue;
      sr_json_gen_str (g, key);
      if (strcmp (key, path[0]) != 0)
        sr_json_gen_value (g, oj_member (v, key));
      else
        {
          gen_replacing (g, oj_member (v, key), path + 1, replacement);
          done = true;
        }
    }
  if (!done)
    {
      sr_json_gen_str (g, path[0]);
      gen_replacing (g, NULL, path + 1, replacement);
    }
  yajl_gen_map_close (g);
}

static char *
merged_text (yajl_val *vals, size_t n, enum skip skip)
{
  yajl_gen g = sr_json_gen_new (false);
  gen_merged (g, vals, n, skip);
  return sr_json_gen_take (g, false);
}

static void
tree_freep (yajl_val *v)
{
  if (*v != NULL)
    yajl_tree_free (*v);
}
#define _cleanup_tree_ __attribute__ ((cleanup (tree_freep)))

/* runc: "set both memory and swap to unlimited" when only the limit is. */
static bool
unlimited_without_swap (yajl_val patch)
{
  yajl_val mem = oj_member (patch, "memory");
  yajl_val limit = mem != NULL ? oj_member (mem, "limit") : NULL;
  return limit != NULL && YAJL_IS_INTEGER (limit)
         && YAJL_GET_INTEGER (limit) == -1 && oj_member (mem, "swap") == NULL;
}

int
sr_resources_merge (const char *config, size_t config_len, const char *patch,
                    size_t patch_len, char **config_out, char **resources_out,
                    char **previous_out, sr_error **err)
{
  static const char swap_unlimited[] = "{\"memory\":{\"swap\":-1}}";
  static const char *const path[] = { "linux", "resources", NULL };
  static const char empty[] = "{}";
  _cleanup_tree_ yajl_val cfg = oj_parse_document (config, config_len, err);
  if (cfg == NULL || !YAJL_IS_OBJECT (cfg))
    return cfg == NULL ? sr_wrap (err, "saved config")
                       : sr_fail (err, EINVAL, "saved config: not an object");
  _cleanup_tree_ yajl_val p = oj_parse_document (patch, patch_len, err);
  if (p == NULL || !YAJL_IS_OBJECT (p))
    return p == NULL ? sr_wrap (err, "resources")
                     : sr_fail (err, EINVAL, "resources: expected an object");
  _cleanup_tree_ yajl_val extra
      = oj_parse_document (swap_unlimited, strlen (swap_unlimited), err);
  _cleanup_tree_ yajl_val none = oj_parse_document (empty, 2, err);
  if (extra == NULL || none == NULL)
    return -1;

  yajl_val lin = oj_member (cfg, "linux");
  yajl_val base = lin != NULL ? oj_member (lin, "resources") : NULL;
  if (base == NULL || !YAJL_IS_OBJECT (base))
    base = none;
  yajl_val vals[MAX_PATCHES] = { base, p, extra };
  size_t n = unlimited_without_swap (p) ? 3 : 2;

  _cleanup_free_ char *saved = merged_text (vals, n, SKIP_PATCH_DEVICES);
  _cleanup_tree_ yajl_val saved_tree
      = oj_parse_document (saved, strlen (saved), err);
  if (saved_tree == NULL)
    return sr_wrap (err, "merged resources");
  yajl_gen g = sr_json_gen_new (true);
  gen_replacing (g, cfg, path, saved_tree);
  *config_out = sr_json_gen_take (g, true);
  *resources_out = merged_text (vals, n, SKIP_ALL_DEVICES);
  *previous_out = merged_text (vals, 1, SKIP_ALL_DEVICES);
  return 0;
}
