/* Walking a yajl tree against an oj_type description: type checks, exact
 * integer ranges, required fields, last-wins duplicate keys. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "oci-spec/types.h"
#include "sandrun/util.h"

/* ---- scalars ------------------------------------------------------------ */

/* yajl keeps every number's text; integers that overflow int64 exist only
 * there, so all integers are read from it.  "1.0" and "1e3" are not
 * integers, like in Go. */
static const char *
integer_text (yajl_val v)
{
  if (!YAJL_IS_NUMBER (v) || v->u.number.r == NULL
      || strpbrk (v->u.number.r, ".eE") != NULL)
    return NULL;
  return v->u.number.r;
}

static int
parse_unsigned (yajl_val v, const oj_path *p, uint64_t max, uint64_t *out,
                sr_error **err)
{
  const char *s = integer_text (v);
  if (s == NULL || *s == '-')
    return oj_fail (p, err, "expected unsigned integer");
  char *end = NULL;
  errno = 0;
  unsigned long long n = strtoull (s, &end, 10);
  if (end == s || *end != '\0')
    return oj_fail (p, err, "expected unsigned integer");
  if (errno == ERANGE || n > max)
    return oj_fail (p, err, "%.32s is out of range (0 to %" PRIu64 ")", s,
                    max);
  *out = n;
  return 0;
}

static int
parse_signed (yajl_val v, const oj_path *p, int64_t min, int64_t max,
              int64_t *out, sr_error **err)
{
  const char *s = integer_text (v);
  if (s == NULL)
    return oj_fail (p, err, "expected integer");
  char *end = NULL;
  errno = 0;
  long long n = strtoll (s, &end, 10);
  if (end == s || *end != '\0')
    return oj_fail (p, err, "expected integer");
  if (errno == ERANGE || n < min || n > max)
    return oj_fail (p, err,
                    "%.32s is out of range (%" PRId64 " to %" PRId64 ")", s,
                    min, max);
  *out = n;
  return 0;
}

static int
parse_bool (yajl_val v, const oj_path *p, bool *out, sr_error **err)
{
  if (!YAJL_IS_TRUE (v) && !YAJL_IS_FALSE (v))
    return oj_fail (p, err, "expected boolean");
  *out = YAJL_IS_TRUE (v);
  return 0;
}

static int
parse_string (yajl_val v, const oj_path *p, char **out, sr_error **err)
{
  if (!YAJL_IS_STRING (v))
    return oj_fail (p, err, "expected string");
  *out = xstrdup (v->u.string);
  return 0;
}

static int
parse_strv (yajl_val v, const oj_path *p, char ***out, sr_error **err)
{
  if (!YAJL_IS_ARRAY (v))
    return oj_fail (p, err, "expected array of strings");
  size_t n = v->u.array.len;
  for (size_t i = 0; i < n; i++)
    if (!YAJL_IS_STRING (v->u.array.values[i]))
      return oj_fail (p, err, "expected array of strings");
  char **sv = xcalloc (n + 1, sizeof *sv);
  for (size_t i = 0; i < n; i++)
    sv[i] = xstrdup (v->u.array.values[i]->u.string);
  *out = sv;
  return 0;
}

static int
parse_u32v (yajl_val v, const oj_path *p, uint32_t **out, size_t *out_len,
            sr_error **err)
{
  if (!YAJL_IS_ARRAY (v))
    return oj_fail (p, err, "expected array of unsigned integers");
  size_t n = v->u.array.len;
  _cleanup_free_ uint32_t *ids = xcalloc (n, sizeof *ids);
  for (size_t i = 0; i < n; i++)
    {
      oj_path ip = OJ_INDEX_PATH (p, i);
      uint64_t id;
      if (parse_unsigned (v->u.array.values[i], &ip, UINT32_MAX, &id, err) < 0)
        return -1;
      ids[i] = (uint32_t) id;
    }
  *out = steal_pointer (&ids);
  *out_len = n;
  return 0;
}

/* ---- duplicate keys ----------------------------------------------------- */

typedef struct
{
  const char *key;
  size_t index;
} key_ref;

static int
key_ref_cmp (const void *a, const void *b)
{
  const key_ref *x = a, *y = b;
  int c = strcmp (x->key, y->key);
  if (c != 0)
    return c;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* For each member of `obj`, whether it is the last with its key (Go keeps
 * the last).  Sorting keeps hostile objects with many keys O(n log n). */
static bool *
last_of_each_key (yajl_val obj, size_t *kept)
{
  size_t n = obj->u.object.len;
  bool *keep = xcalloc (n, sizeof *keep);
  _cleanup_free_ key_ref *refs = xcalloc (n, sizeof *refs);
  for (size_t i = 0; i < n; i++)
    refs[i] = (key_ref){ obj->u.object.keys[i], i };
  qsort (refs, n, sizeof *refs, key_ref_cmp);
  *kept = 0;
  for (size_t i = 0; i < n; i++)
    if (i + 1 == n || strcmp (refs[i].key, refs[i + 1].key) != 0)
      {
        keep[refs[i].index] = true;
        (*kept)++;
      }
  return keep;
}

static int
parse_map (yajl_val v, const oj_path *p, oci_map *out, sr_error **err)
{
  if (!YAJL_IS_OBJECT (v))
    return oj_fail (p, err, "expected object");
  size_t kept;
  _cleanup_free_ bool *keep = last_of_each_key (v, &kept);
  out->v = xcalloc (kept, sizeof *out->v);
  for (size_t i = 0; i < v->u.object.len; i++)
    {
      if (!keep[i])
        continue;
      oj_path kp = OJ_KEY_PATH (p, v->u.object.keys[i]);
      if (!YAJL_IS_STRING (v->u.object.values[i]))
        return oj_fail (&kp, err, "expected string");
      oci_kv *kv = &out->v[out->len++];
      kv->key = xstrdup (v->u.object.keys[i]);
      kv->value = xstrdup (v->u.object.values[i]->u.string);
    }
  return 0;
}

/* ---- aggregates --------------------------------------------------------- */

static int
parse_array (yajl_val v, const oj_path *p, const oj_field *f, void *base,
             sr_error **err)
{
  if (!YAJL_IS_ARRAY (v))
    return oj_fail (p, err, "expected array");
  const oj_type *t = f->sub;
  size_t n = v->u.array.len;
  char *elems = xcalloc (n, t->size);
  /* Stored before filling so that a failure leaves it to the freer. */
  *(void **) OJ_AT (base, f->offset) = elems;
  *(size_t *) OJ_AT (base, f->len_offset) = n;
  for (size_t i = 0; i < n; i++)
    {
      oj_path ip = OJ_INDEX_PATH (p, i);
      if (oj_parse_object (v->u.array.values[i], &ip, t, elems + i * t->size,
                           err)
          < 0)
        return -1;
    }
  return 0;
}

static int
parse_keyed (yajl_val v, const oj_path *p, const oj_field *f, void *base,
             sr_error **err)
{
  if (!YAJL_IS_OBJECT (v))
    return oj_fail (p, err, "expected object");
  const oj_type *t = f->sub;
  size_t kept;
  _cleanup_free_ bool *keep = last_of_each_key (v, &kept);
  char *elems = xcalloc (kept, t->size);
  *(void **) OJ_AT (base, f->offset) = elems;
  *(size_t *) OJ_AT (base, f->len_offset) = kept;
  for (size_t i = 0; i < v->u.object.len; i++)
    {
      if (!keep[i])
        continue;
      const char *key = v->u.object.keys[i];
      oj_path kp = OJ_KEY_PATH (p, key);
      *(char **) OJ_AT (elems, t->key_offset) = xstrdup (key);
      if (oj_parse_object (v->u.object.values[i], &kp, t, elems, err) < 0)
        return -1;
      elems += t->size;
    }
  return 0;
}

static int
parse_obj (yajl_val v, const oj_path *p, const oj_type *t, void **out,
           sr_error **err)
{
  if (!YAJL_IS_OBJECT (v))
    return oj_fail (p, err, "expected object");
  *out = xcalloc (1, t->size);
  return oj_parse_object (v, p, t, *out, err);
}

/* ---- one field ---------------------------------------------------------- */

#define OPT_SET(T, addr, val)                                                 \
  do                                                                          \
    {                                                                         \
      T *o_ = (addr);                                                         \
      o_->value = (val);                                                      \
      o_->set = true;                                                         \
    }                                                                         \
  while (0)

static int
parse_int_field (yajl_val v, const oj_path *p, const oj_field *f, void *addr,
                 sr_error **err)
{
  uint64_t u = 0;
  int64_t s = 0;
  uint64_t umax = f->max ? f->max : UINT32_MAX;
  switch (f->kind)
    {
    case OJ_U32:
    case OJ_OPT_U32:
      if (parse_unsigned (v, p, umax, &u, err) < 0)
        return -1;
      if (f->kind == OJ_U32)
        *(uint32_t *) addr = (uint32_t) u;
      else
        OPT_SET (oci_opt_u32, addr, (uint32_t) u);
      return 0;
    case OJ_U64:
    case OJ_OPT_U64:
      if (parse_unsigned (v, p, f->max ? f->max : UINT64_MAX, &u, err) < 0)
        return -1;
      if (f->kind == OJ_U64)
        *(uint64_t *) addr = u;
      else
        OPT_SET (oci_opt_u64, addr, u);
      return 0;
    case OJ_I32:
    case OJ_OPT_I32:
      if (parse_signed (v, p, INT32_MIN, INT32_MAX, &s, err) < 0)
        return -1;
      if (f->kind == OJ_I32)
        *(int32_t *) addr = (int32_t) s;
      else
        OPT_SET (oci_opt_i32, addr, (int32_t) s);
      return 0;
    default: /* OJ_I64, OJ_OPT_I64 */
      if (parse_signed (v, p, INT64_MIN, INT64_MAX, &s, err) < 0)
        return -1;
      if (f->kind == OJ_I64)
        *(int64_t *) addr = s;
      else
        OPT_SET (oci_opt_i64, addr, s);
      return 0;
    }
}

static int
parse_field (yajl_val v, const oj_path *p, const oj_field *f, void *base,
             sr_error **err)
{
  void *addr = OJ_AT (base, f->offset);
  bool b = false;
  switch (f->kind)
    {
    case OJ_STR:
      return parse_string (v, p, addr, err);
    case OJ_STRV:
      return parse_strv (v, p, addr, err);
    case OJ_BOOL:
      return parse_bool (v, p, addr, err);
    case OJ_OPT_BOOL:
      if (parse_bool (v, p, &b, err) < 0)
        return -1;
      OPT_SET (oci_opt_bool, addr, b);
      return 0;
    case OJ_U32V:
      return parse_u32v (v, p, addr, OJ_AT (base, f->len_offset), err);
    case OJ_MAP:
      return parse_map (v, p, addr, err);
    case OJ_OBJ:
      return parse_obj (v, p, f->sub, addr, err);
    case OJ_INLINE:
      if (!YAJL_IS_OBJECT (v))
        return oj_fail (p, err, "expected object");
      return oj_parse_object (v, p, f->sub, addr, err);
    case OJ_ARRAY:
      return parse_array (v, p, f, base, err);
    case OJ_KEYED:
      return parse_keyed (v, p, f, base, err);
    default:
      return parse_int_field (v, p, f, addr, err);
    }
}

int
oj_parse_object (yajl_val v, const oj_path *path, const oj_type *t, void *obj,
                 sr_error **err)
{
  if (!YAJL_IS_OBJECT (v))
    return oj_fail (path, err, "expected object");
  for (const oj_field *f = t->fields; f->name != NULL; f++)
    {
      oj_path fp = OJ_FIELD_PATH (path, f->name);
      yajl_val fv = oj_member (v, f->name);
      if (fv == NULL)
        {
          if (f->required)
            return oj_fail (&fp, err, "required");
          continue;
        }
      if (parse_field (fv, &fp, f, obj, err) < 0)
        return -1;
    }
  return t->check ? t->check (obj, path, err) : 0;
}
