/* JSON helpers of the MCP server: re-emitting a parsed document, a depth
 * check before parsing (yajl_tree frees recursively), UTF-8 and base64. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"
#include "sandrun/jsongen.h"
#include "sandrun/util.h"

void
mcp_json_emit (yajl_gen g, yajl_val v)
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
        mcp_json_emit (g, v->u.array.values[i]);
      yajl_gen_array_close (g);
    }
  else if (YAJL_IS_OBJECT (v))
    {
      yajl_gen_map_open (g);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          sr_json_gen_str (g, v->u.object.keys[i]);
          mcp_json_emit (g, v->u.object.values[i]);
        }
      yajl_gen_map_close (g);
    }
}

size_t
mcp_json_depth (const char *text, size_t len)
{
  size_t depth = 0, max = 0;
  bool in_str = false;
  for (size_t i = 0; i < len; i++)
    {
      char c = text[i];
      if (in_str)
        {
          if (c == '\\')
            i++;
          else if (c == '"')
            in_str = false;
        }
      else if (c == '"')
        in_str = true;
      else if (c == '[' || c == '{')
        {
          if (++depth > max)
            max = depth;
        }
      else if ((c == ']' || c == '}') && depth > 0)
        depth--;
    }
  return max;
}

yajl_val
mcp_json_get (yajl_val obj, const char *key)
{
  if (!YAJL_IS_OBJECT (obj))
    return NULL;
  for (size_t i = 0; i < obj->u.object.len; i++)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      return obj->u.object.values[i];
  return NULL;
}

const char *
mcp_json_str (yajl_val obj, const char *key)
{
  yajl_val v = mcp_json_get (obj, key);
  return YAJL_IS_STRING (v) ? v->u.string : NULL;
}

/* Length of the UTF-8 sequence starting at s (0 when invalid). */
static size_t
utf8_char (const unsigned char *s, size_t left)
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
mcp_utf8_prefix (const char *s, size_t len, size_t max)
{
  size_t i = 0;
  while (i < len)
    {
      size_t n = utf8_char ((const unsigned char *) s + i, len - i);
      if (n == 0 || i + n > max)
        break;
      i += n;
    }
  return i;
}

bool
mcp_utf8_valid (const char *s, size_t len)
{
  return mcp_utf8_prefix (s, len, len) == len && memchr (s, '\0', len) == NULL;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *
mcp_base64_encode (const unsigned char *in, size_t len)
{
  char *out = xmalloc ((len + 2) / 3 * 4 + 1), *o = out;
  for (size_t i = 0; i < len; i += 3)
    {
      uint32_t v = (uint32_t) in[i] << 16;
      if (i + 1 < len)
        v |= (uint32_t) in[i + 1] << 8;
      if (i + 2 < len)
        v |= in[i + 2];
      *o++ = b64[v >> 18];
      *o++ = b64[(v >> 12) & 63];
      *o++ = i + 1 < len ? b64[(v >> 6) & 63] : '=';
      *o++ = i + 2 < len ? b64[v & 63] : '=';
    }
  *o = '\0';
  return out;
}

unsigned char *
mcp_base64_decode (const char *in, size_t *len)
{
  size_t n = strlen (in);
  if (n % 4 != 0)
    return NULL;
  unsigned char *out = xmalloc (n / 4 * 3 + 1);
  size_t o = 0;
  for (size_t i = 0; i < n; i += 4)
    {
      uint32_t v = 0;
      int pad = 0;
      for (int k = 0; k < 4; k++)
        {
          const char *p = in[i + k] != '\0' ? strchr (b64, in[i + k]) : NULL;
          if (in[i + k] == '=' && i + 4 == n && k >= 2)
            pad++;
          else if (p == NULL || pad > 0)
            return free (out), NULL;
          v = (v << 6) | (p != NULL ? (uint32_t) (p - b64) : 0);
        }
      out[o++] = v >> 16;
      if (pad < 2)
        out[o++] = (v >> 8) & 0xff;
      if (pad < 1)
        out[o++] = v & 0xff;
    }
  *len = o;
  return out;
}
