/* The JSON merge behind `update` (src/core/resources_merge.c). */
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "sandrun/container_ops.h"
#include "sandrun/util.h"
#include "unit.h"

struct merged
{
  int r;
  char *config, *resources, *previous;
};

static struct merged
merge (const char *config, const char *patch)
{
  struct merged m = { 0 };
  sr_error *err = NULL;
  m.r = sr_resources_merge (config, strlen (config), patch, strlen (patch),
                            &m.config, &m.resources, &m.previous, &err);
  sr_error_free (err);
  return m;
}

static void
merged_free (struct merged *m)
{
  free (m->config);
  free (m->resources);
  free (m->previous);
}

/* The compact text of linux.resources in a generated config. */
static char *
saved_resources (const char *config)
{
  static const char *path[] = { "linux", "resources", NULL };
  char ebuf[128];
  yajl_val t = yajl_tree_parse (config, ebuf, sizeof ebuf);
  yajl_val r = t ? yajl_tree_get (t, path, yajl_t_object) : NULL;
  char *out = NULL;
  if (r != NULL)
    {
      /* Re-merge with an empty patch: the same generator, compact. */
      struct merged m = merge (config, "{}");
      out = m.r == 0 ? xstrdup (m.resources) : NULL;
      merged_free (&m);
    }
  if (t != NULL)
    yajl_tree_free (t);
  return out;
}

static bool
config_has (const char *config, const char *const *path, const char *want)
{
  char ebuf[128];
  yajl_val t = yajl_tree_parse (config, ebuf, sizeof ebuf);
  yajl_val v = t ? yajl_tree_get (t, (const char **) path, yajl_t_any) : NULL;
  bool ok = false;
  if (v != NULL && YAJL_IS_STRING (v))
    ok = strcmp (v->u.string, want) == 0;
  else if (v != NULL && YAJL_IS_NUMBER (v))
    ok = strcmp (v->u.number.r, want) == 0;
  else if (v != NULL && YAJL_IS_ARRAY (v))
    ok = strcmp (want, "[array]") == 0;
  if (t != NULL)
    yajl_tree_free (t);
  return ok;
}

static void
test_merge_into_existing (void)
{
  struct merged m = merge (
      "{\"ociVersion\":\"1.0.2\",\"process\":{\"args\":[\"sh\"]},"
      "\"linux\":{\"namespaces\":[{\"type\":\"pid\"}],\"resources\":{"
      "\"devices\":[{\"allow\":false,\"access\":\"rwm\"}],"
      "\"memory\":{\"limit\":100,\"reservation\":50}}},\"x-extra\":12.50}",
      "{\"memory\":{\"swap\":300},\"cpu\":{\"shares\":512}}");
  CHECK (m.r == 0, "merge succeeds");
  CHECK_STR (m.resources,
             "{\"memory\":{\"limit\":100,\"reservation\":50,\"swap\":300},"
             "\"cpu\":{\"shares\":512}}",
             "applied: merged, without device rules");
  CHECK_STR (m.previous, "{\"memory\":{\"limit\":100,\"reservation\":50}}",
             "previous: the old resources, without device rules");
  static const char *const dev[] = { "linux", "resources", "devices", NULL };
  static const char *const swap[] = { "linux", "resources", "memory", "swap", NULL };
  static const char *const ns[] = { "linux", "namespaces", NULL };
  static const char *const extra[] = { "x-extra", NULL };
  static const char *const ver[] = { "ociVersion", NULL };
  CHECK (config_has (m.config, dev, "[array]"), "saved: devices kept");
  CHECK (config_has (m.config, swap, "300"), "saved: the new swap");
  CHECK (config_has (m.config, ns, "[array]"), "saved: the rest of linux kept");
  CHECK (config_has (m.config, extra, "12.50"), "saved: unknown fields and number texts kept");
  CHECK (config_has (m.config, ver, "1.0.2"), "saved: ociVersion kept");
  merged_free (&m);
}

static void
test_no_resources_yet (void)
{
  struct merged m = merge ("{\"process\":{}}", "{\"pids\":{\"limit\":5}}");
  CHECK (m.r == 0, "merge into a config without linux");
  CHECK_STR (m.resources, "{\"pids\":{\"limit\":5}}", "applied");
  CHECK_STR (m.previous, "{}", "previous: none");
  _cleanup_free_ char *saved = saved_resources (m.config);
  CHECK_STR (saved, "{\"pids\":{\"limit\":5}}", "saved: linux.resources created");
  merged_free (&m);
}

static void
test_unlimited_memory (void)
{
  struct merged m = merge ("{\"linux\":{\"resources\":{\"memory\":{\"limit\":100,\"swap\":200}}}}",
                           "{\"memory\":{\"limit\":-1}}");
  CHECK_STR (m.resources, "{\"memory\":{\"limit\":-1,\"swap\":-1}}",
             "limit -1 without swap: swap -1 too (runc)");
  merged_free (&m);
  m = merge ("{\"linux\":{\"resources\":{\"memory\":{\"limit\":100,\"swap\":200}}}}",
             "{\"memory\":{\"limit\":-1,\"swap\":400}}");
  CHECK_STR (m.resources, "{\"memory\":{\"limit\":-1,\"swap\":400}}",
             "limit -1 with a swap: the swap given");
  merged_free (&m);
}

static void
test_devices_ignored (void)
{
  struct merged m = merge (
      "{\"linux\":{\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}]}}}",
      "{\"devices\":[{\"allow\":true,\"access\":\"rwm\"}],\"pids\":{\"limit\":9}}");
  CHECK_STR (m.resources, "{\"pids\":{\"limit\":9}}", "no device rules are applied");
  CHECK (strstr (m.config, "\"allow\": false") != NULL || strstr (m.config, "\"allow\":false") != NULL,
         "saved: the old device rules stay");
  CHECK (strstr (m.config, "true") == NULL, "saved: the patch's device rules do not");
  merged_free (&m);
}

static void
test_replace_and_null (void)
{
  struct merged m = merge (
      "{\"linux\":{\"resources\":{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":1}],"
      "\"unified\":{\"a.b\":\"1\",\"c.d\":\"2\"},\"cpu\":{\"cpus\":\"0-1\"}}}}",
      "{\"hugepageLimits\":[{\"pageSize\":\"1GB\",\"limit\":2}],"
      "\"unified\":{\"c.d\":\"3\",\"e.f\":\"4\"},\"cpu\":null}");
  CHECK_STR (m.resources,
             "{\"hugepageLimits\":[{\"pageSize\":\"1GB\",\"limit\":2}],"
             "\"unified\":{\"a.b\":\"1\",\"c.d\":\"3\",\"e.f\":\"4\"},"
             "\"cpu\":{\"cpus\":\"0-1\"}}",
             "arrays replace, objects merge key by key, null keeps");
  merged_free (&m);
}

static void
test_repeated_keys (void)
{
  struct merged m = merge ("{\"linux\":{\"resources\":{\"pids\":{\"limit\":1},\"pids\":{\"limit\":2}}}}",
                           "{}");
  CHECK_STR (m.resources, "{\"pids\":{\"limit\":2}}", "a repeated key once, its last value");
  merged_free (&m);
}

static void
test_errors (void)
{
  struct merged m = merge ("{}", "[1]");
  CHECK (m.r < 0, "a patch that is not an object is refused");
  merged_free (&m);
  m = merge ("{}", "{\"memory\":");
  CHECK (m.r < 0, "a truncated patch is refused");
  merged_free (&m);
  m = merge ("not json", "{}");
  CHECK (m.r < 0, "a broken saved config is an error");
  merged_free (&m);
  m = merge ("[]", "{}");
  CHECK (m.r < 0, "a saved config that is not an object is an error");
  merged_free (&m);
}

int
main (void)
{
  test_merge_into_existing ();
  test_no_resources_yet ();
  test_unlimited_memory ();
  test_devices_ignored ();
  test_replace_and_null ();
  test_repeated_keys ();
  test_errors ();
  return unit_finish ();
}
