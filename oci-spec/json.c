/* Documents in, yajl trees out; error messages that name the JSON path. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "json.h"
#include "oci-spec/oci-spec.h"
#include "sandrun/util.h"

/* Text from the document is shown bounded and on one line. */
#define OJ_MAX_SHOWN 64

static bool
key_is_plain (const char *k)
{
  if (*k == '\0')
    return false;
  for (; *k; k++)
    if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z')
          || (*k >= '0' && *k <= '9') || *k == '_' || *k == '-'))
      return false;
  return true;
}

char *
oj_escape (const char *k)
{
  size_t n = strlen (k), shown = n > OJ_MAX_SHOWN ? OJ_MAX_SHOWN : n;
  char *out = xmalloc (shown * 4 + 4), *o = out;
  for (size_t i = 0; i < shown; i++)
    {
      unsigned char c = (unsigned char) k[i];
      if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
        o += sprintf (o, "\\x%02x", c);
      else
        *o++ = (char) c;
    }
  strcpy (o, shown < n ? "..." : "");
  return out;
}

static char *
path_append (char *prefix, const oj_path *p)
{
  const char *dot = *prefix ? "." : "";
  char *s;
  if (p->kind == OJ_SEG_INDEX)
    s = xasprintf ("%s[%zu]", prefix, p->index);
  else if (p->kind == OJ_SEG_FIELD || key_is_plain (p->name))
    s = xasprintf ("%s%s%s", prefix, dot, p->name);
  else
    {
      _cleanup_free_ char *k = oj_escape (p->name);
      s = xasprintf ("%s[\"%s\"]", prefix, k);
    }
  free (prefix);
  return s;
}

/* The chain is as deep as the struct descriptions, never the document. */
static char *
path_render (const oj_path *p)
{
  if (p == NULL)
    return xstrdup ("");
  return path_append (path_render (p->parent), p);
}

int
oj_fail (const oj_path *path, sr_error **err, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  _cleanup_free_ char *msg = xvasprintf (fmt, ap);
  va_end (ap);
  _cleanup_free_ char *where = path_render (path);
  if (*where)
    return sr_fail (err, 0, "%s: %s", where, msg);
  return sr_fail (err, 0, "%s", msg);
}

yajl_val
oj_member (yajl_val obj, const char *key)
{
  if (!YAJL_IS_OBJECT (obj))
    return NULL;
  for (size_t i = obj->u.object.len; i-- > 0;)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      return YAJL_IS_NULL (obj->u.object.values[i]) ? NULL
                                                    : obj->u.object.values[i];
  return NULL;
}

/* ---- the first pass: yajl's own parser with a depth and NUL check ------- */

typedef struct
{
  unsigned depth;
  bool too_deep;
  bool has_nul;
} prescan;

static int
prescan_open (void *ctx)
{
  prescan *ps = ctx;
  if (++ps->depth > OJ_MAX_DEPTH)
    {
      ps->too_deep = true;
      return 0;
    }
  return 1;
}

static int
prescan_close (void *ctx)
{
  prescan *ps = ctx;
  ps->depth--;
  return 1;
}

/* yajl_tree keeps strings NUL-terminated without a length: a "\u0000"
 * would silently cut "/etc/x\u0000y" to "/etc/x".  Refuse it. */
static int
prescan_string (void *ctx, const unsigned char *s, size_t len)
{
  prescan *ps = ctx;
  if (memchr (s, '\0', len) != NULL)
    {
      ps->has_nul = true;
      return 0;
    }
  return 1;
}

/* Numbers are taken raw so that no size or format trips this pass. */
static int
prescan_number (void *ctx, const char *s, size_t len)
{
  return 1;
}

static const yajl_callbacks prescan_callbacks = {
  .yajl_number = prescan_number,
  .yajl_string = prescan_string,
  .yajl_start_map = prescan_open,
  .yajl_map_key = prescan_string,
  .yajl_end_map = prescan_close,
  .yajl_start_array = prescan_open,
  .yajl_end_array = prescan_close,
};

/* yajl's messages span lines and end with a period: keep the first line. */
static char *
one_line (const char *msg)
{
  size_t n = strcspn (msg, "\r\n");
  while (n > 0 && (msg[n - 1] == '.' || msg[n - 1] == ' '))
    n--;
  return xstrndup (msg, n);
}

static int
prescan_document (const char *data, size_t len, sr_error **err)
{
  prescan ps = { 0 };
  yajl_handle h = yajl_alloc (&prescan_callbacks, NULL, &ps);
  if (h == NULL)
    return sr_fail (err, ENOMEM, "invalid JSON");
  yajl_status st = yajl_parse (h, (const unsigned char *) data, len);
  size_t at = yajl_get_bytes_consumed (h);
  if (st == yajl_status_ok)
    {
      st = yajl_complete_parse (h);
      at = len;
    }
  int ret = 0;
  if (ps.too_deep)
    ret = sr_fail (err, 0, "invalid JSON: nesting deeper than %d levels",
                   OJ_MAX_DEPTH);
  else if (ps.has_nul)
    ret = sr_fail (err, 0, "invalid JSON: NUL character in a string");
  else if (st != yajl_status_ok)
    {
      unsigned char *raw
          = yajl_get_error (h, 0, (const unsigned char *) data, len);
      _cleanup_free_ char *msg = one_line (raw ? (const char *) raw : "");
      yajl_free_error (h, raw);
      ret = sr_fail (err, 0, "invalid JSON: %s (at byte %zu)", msg, at);
    }
  yajl_free (h);
  return ret;
}

yajl_val
oj_parse_document (const char *data, size_t len, sr_error **err)
{
  if (len > OCI_MAX_DOCUMENT_SIZE)
    {
      sr_fail (err, EFBIG, "document of %zu bytes refused (at most %u)", len,
               OCI_MAX_DOCUMENT_SIZE);
      return NULL;
    }
  if (prescan_document (data, len, err) < 0)
    return NULL;

  /* The first pass rejected raw NUL bytes, so the copy's strlen is len. */
  _cleanup_free_ char *text = xmalloc (len + 1);
  memcpy (text, data, len);
  text[len] = '\0';
  char errbuf[256] = "";
  yajl_val tree = yajl_tree_parse (text, errbuf, sizeof errbuf);
  if (tree == NULL)
    {
      _cleanup_free_ char *msg = one_line (errbuf);
      sr_fail (err, 0, "invalid JSON: %s", msg);
    }
  return tree;
}

void *
oj_parse_data (const char *data, size_t len, const oj_type *t, sr_error **err)
{
  yajl_val tree = oj_parse_document (data, len, err);
  if (tree == NULL)
    return NULL;
  void *obj = NULL;
  if (!YAJL_IS_OBJECT (tree))
    oj_fail (NULL, err, "expected a JSON object at the top level");
  else
    {
      obj = xcalloc (1, t->size);
      if (oj_parse_object (tree, NULL, t, obj, err) < 0)
        {
          oj_free (t, obj);
          obj = NULL;
        }
    }
  yajl_tree_free (tree);
  return obj;
}
