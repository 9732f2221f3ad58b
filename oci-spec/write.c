/* Writing a struct back as JSON, driven by the same oj_type descriptions as
 * the parser and the freer: a field the parser knows cannot be forgotten
 * here.  What is absent stays absent (NULL pointers, unset oci_opt_*); plain
 * scalars that are not required are left out when zero, as the parser reads
 * an absent one as zero, so parse -> write -> parse gives the same struct. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "json.h"
#include "oci-spec/oci-spec.h"
#include "sandrun/jsongen.h"
#include "sandrun/util.h"

/* yajl validates strings (yajl_gen_validate_utf8); a failure is remembered
 * rather than checked at every call. */
typedef struct
{
  yajl_gen g;
  bool failed;
} writer;

static void
w_str (writer *w, const char *s)
{
  if (yajl_gen_string (w->g, (const unsigned char *) s, strlen (s))
      != yajl_gen_status_ok)
    w->failed = true;
}

static void
w_u64 (writer *w, uint64_t v)
{
  /* yajl_gen_integer takes a long long: values above INT64_MAX as text. */
  char buf[24];
  int n = snprintf (buf, sizeof buf, "%" PRIu64, v);
  yajl_gen_number (w->g, buf, (size_t) n);
}

static void
w_i64 (writer *w, int64_t v)
{
  yajl_gen_integer (w->g, v);
}

static void w_object (writer *w, const oj_type *t, const void *obj);

static void
w_strv (writer *w, char *const *sv)
{
  yajl_gen_array_open (w->g);
  for (; *sv != NULL; sv++)
    w_str (w, *sv);
  yajl_gen_array_close (w->g);
}

static void
w_elements (writer *w, const oj_field *f, const void *base)
{
  const oj_type *t = f->sub;
  const char *elems = *(char *const *) OJ_AT (base, f->offset);
  size_t n = *(const size_t *) OJ_AT (base, f->len_offset);
  if (f->kind == OJ_KEYED)
    yajl_gen_map_open (w->g);
  else
    yajl_gen_array_open (w->g);
  for (size_t i = 0; i < n; i++)
    {
      const void *e = elems + i * t->size;
      if (f->kind == OJ_KEYED)
        w_str (w, *(char *const *) OJ_AT (e, t->key_offset));
      w_object (w, t, e);
    }
  if (f->kind == OJ_KEYED)
    yajl_gen_map_close (w->g);
  else
    yajl_gen_array_close (w->g);
}

/* The optional scalars: write the value when set. */
static bool
w_opt (writer *w, const oj_field *f, const void *addr, bool probe)
{
  switch (f->kind)
    {
#define OPT_CASE(K, T, EMIT)                                                  \
  case K:                                                                     \
    {                                                                         \
      const T *o = addr;                                                      \
      if (!probe && o->set)                                                   \
        EMIT;                                                                 \
      return o->set;                                                          \
    }
      OPT_CASE (OJ_OPT_BOOL, oci_opt_bool, yajl_gen_bool (w->g, o->value));
      OPT_CASE (OJ_OPT_I32, oci_opt_i32, w_i64 (w, o->value));
      OPT_CASE (OJ_OPT_U32, oci_opt_u32, w_u64 (w, o->value));
      OPT_CASE (OJ_OPT_I64, oci_opt_i64, w_i64 (w, o->value));
      OPT_CASE (OJ_OPT_U64, oci_opt_u64, w_u64 (w, o->value));
#undef OPT_CASE
    default:
      return false;
    }
}

/* Whether field `f` of `base` is present, i.e. is written. */
static bool
present (const oj_field *f, const void *base)
{
  const void *addr = OJ_AT (base, f->offset);
  switch (f->kind)
    {
    case OJ_STR:
    case OJ_STRV:
    case OJ_U32V:
    case OJ_OBJ:
      return *(void *const *) addr != NULL;
    case OJ_MAP:
      return ((const oci_map *) addr)->v != NULL;
    case OJ_ARRAY:
    case OJ_KEYED:
      return *(void *const *) addr != NULL;
    case OJ_INLINE:
      return true;
    case OJ_BOOL:
      return f->required || *(const bool *) addr;
    case OJ_I32:
      return f->required || *(const int32_t *) addr != 0;
    case OJ_U32:
      return f->required || *(const uint32_t *) addr != 0;
    case OJ_I64:
      return f->required || *(const int64_t *) addr != 0;
    case OJ_U64:
      return f->required || *(const uint64_t *) addr != 0;
    default:
      return w_opt (NULL, f, addr, true);
    }
}

static void
w_field (writer *w, const oj_field *f, const void *base)
{
  const void *addr = OJ_AT (base, f->offset);
  switch (f->kind)
    {
    case OJ_STR:
      w_str (w, *(char *const *) addr);
      break;
    case OJ_STRV:
      w_strv (w, *(char **const *) addr);
      break;
    case OJ_BOOL:
      yajl_gen_bool (w->g, *(const bool *) addr);
      break;
    case OJ_I32:
      w_i64 (w, *(const int32_t *) addr);
      break;
    case OJ_U32:
      w_u64 (w, *(const uint32_t *) addr);
      break;
    case OJ_I64:
      w_i64 (w, *(const int64_t *) addr);
      break;
    case OJ_U64:
      w_u64 (w, *(const uint64_t *) addr);
      break;
    case OJ_U32V:
      {
        const uint32_t *v = *(uint32_t *const *) addr;
        size_t n = *(const size_t *) OJ_AT (base, f->len_offset);
        yajl_gen_array_open (w->g);
        for (size_t i = 0; i < n; i++)
          w_u64 (w, v[i]);
        yajl_gen_array_close (w->g);
        break;
      }
    case OJ_MAP:
      {
        const oci_map *m = addr;
        yajl_gen_map_open (w->g);
        for (size_t i = 0; i < m->len; i++)
          {
            w_str (w, m->v[i].key);
            w_str (w, m->v[i].value);
          }
        yajl_gen_map_close (w->g);
        break;
      }
    case OJ_OBJ:
      w_object (w, f->sub, *(void *const *) addr);
      break;
    case OJ_INLINE:
      w_object (w, f->sub, addr);
      break;
    case OJ_ARRAY:
    case OJ_KEYED:
      w_elements (w, f, base);
      break;
    default:
      w_opt (w, f, addr, false);
      break;
    }
}

static void
w_object (writer *w, const oj_type *t, const void *obj)
{
  yajl_gen_map_open (w->g);
  for (const oj_field *f = t->fields; f->name != NULL; f++)
    if (present (f, obj))
      {
        w_str (w, f->name);
        w_field (w, f, obj);
      }
  yajl_gen_map_close (w->g);
}

char *
oj_write (const oj_type *t, const void *obj)
{
  writer w = { .g = sr_json_gen_new (true) };
  yajl_gen_config (w.g, yajl_gen_validate_utf8, 1);
  w_object (&w, t, obj);
  if (w.failed)
    {
      yajl_gen_free (w.g);
      errno = EILSEQ;
      return NULL;
    }
  return sr_json_gen_take (w.g, true);
}

char *
oci_config_to_json (const oci_config *cfg)
{
  return oj_write (&oci_config_type, cfg);
}
