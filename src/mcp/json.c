/* JSON helpers of the MCP server: a depth check before parsing (yajl_tree
 * frees recursively), member access, UTF-8 and base64. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"
#include "sandrun/jsongen.h"
#include "sandrun/util.h"

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

bool
mcp_utf8_valid (const char *s, size_t len)
{
  return sr_utf8_prefix (s, len, len) == len && memchr (s, '\0', len) == NULL;
}

static const char b64[]
    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

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
