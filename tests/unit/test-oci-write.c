/* Tests of the serialiser (oci-spec/write.c): for every config the tests
 * have, parse -> write -> parse -> write gives the same text, and the
 * written document still holds every value of the original (nothing the
 * parser knows is dropped). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "json.h"
#include "oci-spec/oci-spec.h"
#include "sandrun/container.h"
#include "sandrun/util.h"
#include "unit.h"

/* Whether JSON value `v` says nothing the parser would keep: null, false, 0
 * (an absent field reads as these). */
static bool
is_zero (yajl_val v)
{
  if (v == NULL || YAJL_IS_NULL (v) || YAJL_IS_FALSE (v))
    return true;
  return YAJL_IS_NUMBER (v) && strcmp (v->u.number.r, "0") == 0;
}

static const oj_field *
field_of (const oj_type *t, const char *name)
{
  for (const oj_field *f = t->fields; f->name != NULL; f++)
    if (strcmp (f->name, name) == 0)
      return f;
  return NULL;
}

static bool covers (yajl_val orig, yajl_val out, const oj_type *t, char *where,
                    size_t wlen);

/* Members of an object of type `t` (NULL: a string map): unknown fields are
 * ignored by the parser, so they need not be written. */
static bool
covers_members (yajl_val orig, yajl_val out, const oj_type *t, bool keyed,
                char *where, size_t wlen)
{
  if (!YAJL_IS_OBJECT (out))
    return false;
  for (size_t i = 0; i < orig->u.object.len; i++)
    {
      const char *k = orig->u.object.keys[i];
      const oj_field *f = t != NULL && !keyed ? field_of (t, k) : NULL;
      if (t != NULL && !keyed && f == NULL)
        continue;
      /* The last of repeated keys is the one kept. */
      if (oj_member (orig, k) != orig->u.object.values[i])
        continue;
      yajl_val ov = orig->u.object.values[i], wv = oj_member (out, k);
      bool ok = keyed ? YAJL_IS_OBJECT (ov)
                            && covers_members (ov, wv, t, false, where, wlen)
                      : covers (ov, wv, f ? f->sub : NULL, where, wlen);
      if (!ok)
        {
          if (*where == '\0')
            snprintf (where, wlen, "%s", k);
          return false;
        }
    }
  return true;
}

/* Every non-zero value of `orig` (of type `t` when an object or an array of
 * objects) is in `out` at the same place, equal. */
static bool
covers (yajl_val orig, yajl_val out, const oj_type *t, char *where,
        size_t wlen)
{
  if (is_zero (orig))
    return true;
  if (out == NULL)
    return false;
  if (YAJL_IS_STRING (orig))
    return YAJL_IS_STRING (out) && strcmp (orig->u.string, out->u.string) == 0;
  if (YAJL_IS_NUMBER (orig))
    return YAJL_IS_NUMBER (out)
           && strcmp (orig->u.number.r, out->u.number.r) == 0;
  if (YAJL_IS_TRUE (orig))
    return YAJL_IS_TRUE (out);
  if (YAJL_IS_ARRAY (orig))
    {
      if (!YAJL_IS_ARRAY (out) || out->u.array.len != orig->u.array.len)
        return false;
      for (size_t i = 0; i < orig->u.array.len; i++)
        if (!covers (orig->u.array.values[i], out->u.array.values[i], t, where,
                     wlen))
          return false;
      return true;
    }
  return covers_members (orig, out, t, t != NULL && t->keyed, where, wlen);
}

/* parse(text) -> write -> parse -> write: both writes equal, and the first
 * covers the original text. */
static void
check_roundtrip (const char *name, const oj_type *t, const char *text,
                 size_t len)
{
  sr_error *err = NULL;
  void *a = oj_parse_data (text, len, t, &err);
  CHECK (a != NULL, "%s parses%s%s", name, err ? ": " : "",
         err ? err->msg : "");
  sr_error_free (err);
  err = NULL;
  if (a == NULL)
    return;
  _cleanup_free_ char *w1 = oj_write (t, a);
  CHECK (w1 != NULL, "%s is written", name);
  void *b = w1 ? oj_parse_data (w1, strlen (w1), t, &err) : NULL;
  CHECK (b != NULL, "%s: the written text parses%s%s", name, err ? ": " : "",
         err ? err->msg : "");
  sr_error_free (err);
  _cleanup_free_ char *w2 = b ? oj_write (t, b) : NULL;
  CHECK_STR (w2, w1, "%s: the second write equals the first", name);

  yajl_val orig = yajl_tree_parse (text, NULL, 0);
  yajl_val out = w1 ? yajl_tree_parse (w1, NULL, 0) : NULL;
  char where[128] = "";
  CHECK (orig != NULL && covers (orig, out, t, where, sizeof where),
         "%s: every value of the original is written (first loss: %s)", name,
         where);
  yajl_tree_free (orig);
  yajl_tree_free (out);
  oj_free (t, a);
  oj_free (t, b);
}

static void
roundtrip_dir (const char *dirpath, const oj_type *t)
{
  _cleanup_closedir_ DIR *d = opendir (dirpath);
  CHECK (d != NULL, "directory %s exists", dirpath);
  for (struct dirent *de; d && (de = readdir (d)) != NULL;)
    {
      size_t n = strlen (de->d_name);
      if (de->d_name[0] == '.' || n < 5
          || strcmp (de->d_name + n - 5, ".json") != 0
          || strstr (de->d_name, "state") != NULL)
        continue;
      _cleanup_free_ char *data = NULL;
      size_t len = 0;
      sr_error *err = NULL;
      if (sr_read_file_at (dirfd (d), de->d_name, OCI_MAX_DOCUMENT_SIZE, &data,
                           &len, &err)
          < 0)
        {
          CHECK (false, "read %s: %s", de->d_name, err->msg);
          sr_error_free (err);
          continue;
        }
      /* yajl_tree_parse (in covers) wants a NUL-terminated string. */
      _cleanup_free_ char *text = xstrndup (data, len);
      _cleanup_free_ char *name = xasprintf ("%s/%s", dirpath, de->d_name);
      check_roundtrip (name, t, text, len);
    }
}

static void
test_spec_default (void)
{
  _cleanup_free_ char *root = sr_spec_default (false, 0, 0);
  check_roundtrip ("spec", &oci_config_type, root, strlen (root));
  _cleanup_free_ char *rootless = sr_spec_default (true, 1000, 1000);
  check_roundtrip ("spec --rootless", &oci_config_type, rootless,
                   strlen (rootless));
}

/* The cases the tables make special: keyed objects, empty vs absent, the
 * full unsigned range, zero scalars, duplicate keys. */
static void
test_shapes (void)
{
  const char *doc
      = "{\"ociVersion\":\"1.2.0\","
        "\"root\":{\"path\":\"r\",\"readonly\":false},"
        "\"process\":{\"cwd\":\"/\",\"args\":[],\"user\":{\"uid\":0}},"
        "\"annotations\":{},\"linux\":{\"timeOffsets\":{\"boottime\":"
        "{\"secs\":-1,\"nanosecs\":2},\"boottime\":{\"secs\":3}},"
        "\"resources\":{\"memory\":{\"limit\":0,\"swappiness\":"
        "18446744073709551615},\"rdma\":{\"mlx\":{\"hcaHandles\":1}}},"
        "\"netDevices\":{\"eth0\":{}}}}";
  sr_error *err = NULL;
  oci_config *c = oci_config_parse_data (doc, strlen (doc), &err);
  CHECK (c != NULL, "shapes document parses");
  sr_error_free (err);
  if (c == NULL)
    return;
  _cleanup_free_ char *w = oci_config_to_json (c);
  yajl_val tree = w ? yajl_tree_parse (w, NULL, 0) : NULL;
  const char *args[] = { "process", "args", NULL };
  yajl_val v = yajl_tree_get (tree, args, yajl_t_array);
  CHECK (v != NULL && v->u.array.len == 0,
         "an empty args array stays an empty array");
  const char *ann[] = { "annotations", NULL };
  v = yajl_tree_get (tree, ann, yajl_t_object);
  CHECK (v != NULL && v->u.object.len == 0, "an empty map stays an empty map");
  const char *eth[] = { "linux", "netDevices", "eth0", NULL };
  const char *mlx[]
      = { "linux", "resources", "rdma", "mlx", "hcaHandles", NULL };
  CHECK (yajl_tree_get (tree, eth, yajl_t_object) != NULL
             && yajl_tree_get (tree, mlx, yajl_t_number) != NULL,
         "keyed objects keep their keys");
  yajl_tree_free (tree);
  CHECK (w && strstr (w, "readonly") == NULL, "a false bool is left out");
  CHECK (w && strstr (w, "\"limit\": 0") != NULL,
         "a set optional zero is written");
  CHECK (w && strstr (w, "18446744073709551615") != NULL,
         "UINT64_MAX is written in full");
  CHECK (w && strstr (w, "\"secs\": 3") != NULL && strstr (w, "-1") == NULL,
         "a repeated key keeps the last value only");
  CHECK (w && strstr (w, "\"domainname\"") == NULL,
         "absent strings stay absent");
  oci_config_free (c);
}

static void
test_bad_utf8 (void)
{
  oci_config c
      = { .oci_version = (char *) "1.2.0", .hostname = (char *) "a\xff" };
  errno = 0;
  char *w = oci_config_to_json (&c);
  CHECK (w == NULL && errno == EILSEQ, "a non-UTF-8 string fails with EILSEQ");
  free (w);
  c.hostname = (char *) "h\xc3\xa9";
  w = oci_config_to_json (&c);
  CHECK (w != NULL && strstr (w, "h\xc3\xa9") != NULL,
         "a UTF-8 string is written as is");
  free (w);
}

int
main (void)
{
  test_spec_default ();
  test_shapes ();
  test_bad_utf8 ();
  roundtrip_dir (OCI_FUZZ_CORPUS "/config", &oci_config_type);
  roundtrip_dir (OCI_FUZZ_CORPUS "/seccomp", &oci_seccomp_type);
  roundtrip_dir (SR_TOP_SRCDIR "/contrib/seccomp", &oci_seccomp_type);
  return unit_finish ();
}
