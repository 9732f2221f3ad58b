/* Freeing is driven by the same descriptions as parsing, so every field a
 * parser fills (even halfway, on failure) is released. */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "oci-spec/oci-spec.h"
#include "sandrun/util.h"

static void
free_elements (const oj_field *f, void *base)
{
  const oj_type *t = f->sub;
  char *elems = *(char **) OJ_AT (base, f->offset);
  size_t n = *(size_t *) OJ_AT (base, f->len_offset);
  for (size_t i = 0; elems != NULL && i < n; i++)
    {
      void *e = elems + i * t->size;
      oj_free_fields (t, e);
      if (t->keyed)
        free (*(char **) OJ_AT (e, t->key_offset));
    }
  free (elems);
}

void
oj_free_fields (const oj_type *t, void *obj)
{
  for (const oj_field *f = t->fields; f->name != NULL; f++)
    {
      void *addr = OJ_AT (obj, f->offset);
      switch (f->kind)
        {
        case OJ_STR:
        case OJ_U32V:
          free (*(void **) addr);
          break;
        case OJ_STRV:
          strv_free (*(char ***) addr);
          break;
        case OJ_MAP:
          oci_map_free (addr);
          break;
        case OJ_OBJ:
          oj_free (f->sub, *(void **) addr);
          break;
        case OJ_INLINE:
          oj_free_fields (f->sub, addr);
          break;
        case OJ_ARRAY:
        case OJ_KEYED:
          free_elements (f, obj);
          break;
        default: /* scalars own nothing */
          break;
        }
    }
}

void
oj_free (const oj_type *t, void *obj)
{
  if (obj == NULL)
    return;
  oj_free_fields (t, obj);
  free (obj);
}

void
oci_config_free (oci_config *c)
{
  oj_free (&oci_config_type, c);
}

void
oci_process_free (oci_process *p)
{
  oj_free (&oci_process_type, p);
}

void
oci_resources_free (oci_resources *r)
{
  oj_free (&oci_resources_type, r);
}

void
oci_seccomp_free (oci_seccomp *s)
{
  oj_free (&oci_seccomp_type, s);
}

void
oci_state_free (oci_state *s)
{
  oj_free (&oci_state_type, s);
}

void
oci_map_free (oci_map *m)
{
  if (m == NULL)
    return;
  for (size_t i = 0; i < m->len; i++)
    {
      free (m->v[i].key);
      free (m->v[i].value);
    }
  free (m->v);
  m->v = NULL;
  m->len = 0;
}

const char *
oci_map_get (const oci_map *m, const char *key)
{
  for (size_t i = 0; m != NULL && i < m->len; i++)
    if (strcmp (m->v[i].key, key) == 0)
      return m->v[i].value;
  return NULL;
}
