#include <stdint.h>
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

void
sr_json_gen_value (yajl_gen g, yajl_val v)
{
  if (v == NULL || YAJL_IS_NULL (v))
    yajl_gen_null (g);
  else if (YAJL_IS_STRING (v))
    sr_json_gen_str (g, v->u.string);
  else if (YAJL_IS_NUMBER (v))
    yajl_gen_number (g, v->u.number.r, strlen (v->u.number.r));
  else if (YAJL_IS_TRUE (v))
    yajl_gen_bool (g, 1);
  else if (YAJL_IS_FALSE (v))
    yajl_gen_bool (g, 0);
  else if (YAJL_IS_ARRAY (v))
    {
      yajl_gen_array_open (g);
      for (size_t i = 0; i < v->u.array.len; i++)
        sr_json_gen_value (g, v->u.array.values[i]);
      yajl_gen_array_close (g);
    }
  else if (YAJL_IS_OBJECT (v))
    {
      yajl_gen_map_open (g);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          sr_json_gen_str (g, v->u.object.keys[i]);
          sr_json_gen_value (g, v->u.object.values[i]);
        }
      yajl_gen_map_close (g);
    }
}

size_t
sr_utf8_char (const unsigned char *s, size_t left)
{
  size_t n;
  uint32_t c;
  if (s[0] < 0x80)
    return 1;
  if ((s[0] & 0xe0) == 0xc0)
    n = 2, c = s[0] & 0x1f;
  else if ((s[0] & 0xf0) == 0xe0)
    n = 3, c = s[0] & 0x0f;
  else if ((s[0] & 0xf8) == 0xf0)
    n = 4, c = s[0] & 0x07;
  else
    return 0;
  if (n > left)
    return 0;
  for (size_t i = 1; i < n; i++)
    {
      if ((s[i] & 0xc0) != 0x80)
        return 0;
      c = (c << 6) | (s[i] & 0x3f);
    }
  static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
  if (c < min[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
    return 0;
  return n;
}

size_t
sr_utf8_prefix (const char *s, size_t len, size_t max)
{
  size_t i = 0;
  while (i < len)
    {
      size_t n = sr_utf8_char ((const unsigned char *) s + i, len - i);
      if (n == 0 || i + n > max)
        break;
      i += n;
    }
  return i;
}
