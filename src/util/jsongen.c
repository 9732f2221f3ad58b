#include <stdlib.h>
#include <string.h>

#include "sandrun/jsongen.h"
#include "sandrun/util.h"

yajl_gen
sr_json_gen_new (bool pretty)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    abort ();
  if (pretty)
    {
      yajl_gen_config (g, yajl_gen_beautify, 1);
      yajl_gen_config (g, yajl_gen_indent_string, "\t");
    }
  return g;
}

void
sr_json_gen_str (yajl_gen g, const char *s)
{
  yajl_gen_string (g, (const unsigned char *) s, strlen (s));
}

void
sr_json_gen_key_str (yajl_gen g, const char *key, const char *value)
{
  sr_json_gen_str (g, key);
  if (value != NULL)
    sr_json_gen_str (g, value);
  else
    yajl_gen_null (g);
}

void
sr_json_gen_key_int (yajl_gen g, const char *key, long long value)
{
  sr_json_gen_str (g, key);
  yajl_gen_integer (g, value);
}

char *
sr_json_gen_take (yajl_gen g, bool newline)
{
  const unsigned char *buf = NULL;
  size_t len = 0;
  yajl_gen_get_buf (g, &buf, &len);
  while (len > 0 && buf[len - 1] == '\n')
    len--;
  char *out = xmalloc (len + 2);
  memcpy (out, buf, len);
  out[len] = '\n';
  out[len + (newline ? 1 : 0)] = '\0';
  yajl_gen_free (g);
  return out;
}
