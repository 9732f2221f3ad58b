/* Parsers of the gateway's input: HTTP request heads, TLS ClientHello SNI,
 * DNS queries.  Bounds are checked before every read; anything unexpected
 * is EG_PARSE_BAD. */
#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

#include "egress/parse.h"

enum eg_parse
eg_http_sniff (const char *buf, size_t len)
{
  for (size_t i = 0; i < len && i < 17; i++)
    {
      if (buf[i] == ' ')
        return i > 0 ? EG_PARSE_DONE : EG_PARSE_BAD;
      if (buf[i] < 'A' || buf[i] > 'Z')
        return EG_PARSE_BAD;
    }
  return len < 17 ? EG_PARSE_MORE : EG_PARSE_BAD;
}

static const char *
find (const char *buf, size_t len, const char *needle)
{
  size_t n = strlen (needle);
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp (buf + i, needle, n) == 0)
      return buf + i;
  return NULL;
}

/* "host[:port]" or "[v6][:port]" into host (normalised) and port. */
static int
parse_authority (const char *s, size_t len, char host[EG_NAME_MAX + 1],
                 uint16_t *port)
{
  const char *end = s + len, *colon = NULL;
  *port = 0;
  if (len > 0 && s[0] == '[')
    {
      const char *close = memchr (s, ']', len);
      if (close == NULL || (size_t) (close - s - 1) > 45)
        return -1;
      memcpy (host, s + 1, (size_t) (close - s - 1));
      host[close - s - 1] = '\0';
      struct eg_addr a;
      if (!eg_addr_parse (host, &a) || a.family != AF_INET6)
        return -1;
      if (close + 1 < end)
        {
          if (close[1] != ':')
            return -1;
          colon = close + 1;
        }
    }
  else
    {
      colon = memchr (s, ':', len);
      if (!eg_name_normalise (s, colon ? (size_t) (colon - s) : len, host))
        return -1;
    }
  if (colon == NULL)
    return 0;
  unsigned long v = 0;
  if (colon + 1 == end || end - colon > 6)
    return -1;
  for (const char *p = colon + 1; p < end; p++)
    {
      if (*p < '0' || *p > '9')
        return -1;
      v = v * 10 + (unsigned long) (*p - '0');
    }
  if (v == 0 || v > 65535)
    return -1;
  *port = (uint16_t) v;
  return 0;
}

static int
parse_target (struct eg_http_req *req)
{
  const char *t = req->target;
  size_t n = req->target_len;
  if (req->is_connect)
    return parse_authority (t, n, req->host, &req->port) < 0 || req->port == 0
               ? -1
               : 0;
  if (n > 0 && t[0] == '/')
    return 0; /* origin-form: the Host header names the host */
  if (n < 8 || strncasecmp (t, "http://", 7) != 0)
    return -1;
  const char *auth = t + 7, *end = t + n, *p = auth;
  while (p < end && *p != '/' && *p != '?')
    p++;
  if (memchr (auth, '@', (size_t) (p - auth)) != NULL)
    return -1; /* userinfo: refused rather than guessed at */
  if (parse_authority (auth, (size_t) (p - auth), req->host, &req->port) < 0)
    return -1;
  if (req->port == 0)
    req->port = 80;
  req->path = p < end ? p : "/";
  req->path_len = p < end ? (size_t) (end - p) : 1;
  return 0;
}

static int
parse_request_line (const char *line, size_t len, struct eg_http_req *req)
{
  const char *sp1 = memchr (line, ' ', len);
  if (sp1 == NULL || eg_http_sniff (line, len) != EG_PARSE_DONE)
    return -1;
  req->is_connect
      = (size_t) (sp1 - line) == 7 && memcmp (line, "CONNECT", 7) == 0;
  const char *t = sp1 + 1, *end = line + len;
  const char *sp2 = memchr (t, ' ', (size_t) (end - t));
  if (sp2 == NULL || sp2 == t)
    return -1;
  for (const char *p = t; p < sp2; p++)
    if ((unsigned char) *p <= ' ' || *p == 0x7f)
      return -1;
  if (end - sp2 - 1 != 8 || memcmp (sp2 + 1, "HTTP/1.", 7) != 0
      || (sp2[8] != '0' && sp2[8] != '1'))
    return -1;
  req->target = t;
  req->target_len = (size_t) (sp2 - t);
  return parse_target (req);
}

static int
parse_headers (const char *p, const char *end, struct eg_http_req *req)
{
  int hosts = 0;
  while (p < end)
    {
      const char *eol = find (p, (size_t) (end - p), "\r\n");
      if (eol == NULL)
        return -1;
      if (eol == p)
        break;
      const char *colon = memchr (p, ':', (size_t) (eol - p));
      if (colon == NULL || colon == p || *p == ' ' || *p == '\t')
        return -1; /* no obsolete line folding, no nameless header */
      for (const char *c = p; c < colon; c++)
        if ((unsigned char) *c <= ' ' || *c == 0x7f)
          return -1;
      if (colon - p == 4 && strncasecmp (p, "host", 4) == 0)
        {
          const char *v = colon + 1, *ve = eol;
          while (v < ve && (*v == ' ' || *v == '\t'))
            v++;
          while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
          if (++hosts > 1
              || parse_authority (v, (size_t) (ve - v), req->host_header,
                                  &req->host_header_port)
                     < 0)
            return -1;
        }
      p = eol + 2;
    }
  return 0;
}

enum eg_parse
eg_http_parse (const char *buf, size_t len, struct eg_http_req *req)
{
  memset (req, 0, sizeof *req);
  const char *end
      = find (buf, len < EG_HEAD_MAX ? len : EG_HEAD_MAX, "\r\n\r\n");
  if (end == NULL)
    return len >= EG_HEAD_MAX ? EG_PARSE_BAD : EG_PARSE_MORE;
  req->head_len = (size_t) (end - buf) + 4;
  const char *eol = find (buf, req->head_len, "\r\n");
  if (parse_request_line (buf, (size_t) (eol - buf), req) < 0
      || parse_headers (eol + 2, end + 2, req) < 0)
    return EG_PARSE_BAD;
  if (req->host[0] == '\0')
    {
      if (req->host_header[0] == '\0')
        return EG_PARSE_BAD; /* origin-form needs Host: */
      memcpy (req->host, req->host_header, sizeof req->host);
      req->port = req->host_header_port;
    }
  return EG_PARSE_DONE;
}

static uint32_t
get16 (const uint8_t *p)
{
  return (uint32_t) p[0] << 8 | p[1];
}

/* Walk the ClientHello body [p, end) to the server_name extension. */
static enum eg_parse
hello_sni (const uint8_t *p, const uint8_t *end, char sni[EG_NAME_MAX + 1])
{
  if (end - p < 2 + 32 + 1)
    return EG_PARSE_BAD;
  p += 2 + 32; /* legacy_version, random */
  if (p[0] > end - p - 1)
    return EG_PARSE_BAD;
  p += 1 + p[0]; /* session id */
  if (end - p < 2 || get16 (p) > (size_t) (end - p - 2))
    return EG_PARSE_BAD;
  p += 2 + get16 (p); /* cipher suites */
  if (end - p < 1 || p[0] > end - p - 1)
    return EG_PARSE_BAD;
  p += 1 + p[0]; /* compression methods */
  if (p == end)
    return EG_PARSE_DONE; /* no extensions */
  if (end - p < 2 || get16 (p) > (size_t) (end - p - 2))
    return EG_PARSE_BAD;
  end = p + 2 + get16 (p);
  p += 2;
  while (end - p >= 4)
    {
      uint32_t type = get16 (p), len = get16 (p + 2);
      p += 4;
      if (len > (size_t) (end - p))
        return EG_PARSE_BAD;
      if (type == 0)
        {
          /* server_name_list: the first host_name entry */
          if (len < 5 || get16 (p) != len - 2 || p[2] != 0
              || get16 (p + 3) > len - 5)
            return EG_PARSE_BAD;
          if (!eg_name_normalise ((const char *) p + 5, get16 (p + 3), sni))
            return EG_PARSE_BAD;
          return EG_PARSE_DONE;
        }
      p += len;
    }
  return p == end ? EG_PARSE_DONE : EG_PARSE_BAD;
}

enum eg_parse
eg_tls_sni (const uint8_t *buf, size_t len, char sni[EG_NAME_MAX + 1])
{
  sni[0] = '\0';
  if (len >= 1 && buf[0] != 0x16)
    return EG_PARSE_BAD;
  if (len >= 2 && buf[1] != 0x03)
    return EG_PARSE_BAD;
  if (len < 5)
    return EG_PARSE_MORE;
  uint32_t rec = get16 (buf + 3);
  if (rec < 4 || rec > 16384)
    return EG_PARSE_BAD;
  if (len < 5 + rec)
    return EG_PARSE_MORE;
  const uint8_t *h = buf + 5;
  uint32_t hlen = (uint32_t) h[1] << 16 | get16 (h + 2);
  if (h[0] != 1 || hlen > rec - 4)
    return EG_PARSE_BAD; /* not a ClientHello, or split over records */
  return hello_sni (h + 4, h + 4 + hlen, sni);
}

enum eg_parse
eg_dns_parse_query (const uint8_t *buf, size_t len, struct eg_dns_query *q)
{
  memset (q, 0, sizeof *q);
  if (len < 12)
    return EG_PARSE_BAD;
  q->id = (uint16_t) get16 (buf);
  q->flags = (uint16_t) get16 (buf + 2);
  if ((q->flags & 0x8000) || ((q->flags >> 11) & 0xf) != 0
      || get16 (buf + 4) != 1 || get16 (buf + 6) != 0 || get16 (buf + 8) != 0)
    return EG_PARSE_BAD;
  char name[256];
  size_t n = 0, off = 12;
  for (;;)
    {
      if (off >= len)
        return EG_PARSE_BAD;
      uint8_t l = buf[off++];
      if (l == 0)
        break;
      if (l > 63 || off + l > len || n + l + 1 > sizeof name - 1)
        return EG_PARSE_BAD; /* also refuses compression pointers */
      if (memchr (buf + off, '.', l) != NULL)
        return EG_PARSE_BAD;
      if (n > 0)
        name[n++] = '.';
      memcpy (name + n, buf + off, l);
      n += l;
      off += l;
    }
  if (off + 4 > len || !eg_name_normalise (name, n, q->name))
    return EG_PARSE_BAD;
  q->qtype = (uint16_t) get16 (buf + off);
  q->qclass = (uint16_t) get16 (buf + off + 2);
  q->question_end = off + 4;
  return EG_PARSE_DONE;
}

static void
put16 (uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t) (v >> 8);
  p[1] = (uint8_t) v;
}

size_t
eg_dns_reply (const uint8_t *query, const struct eg_dns_query *q, int rcode,
              const struct eg_addr *addrs, size_t n, uint8_t *out, size_t cap)
{
  size_t qlen = q->question_end - 12;
  if (cap < q->question_end)
    return 0;
  memset (out, 0, 12);
  put16 (out, q->id);
  put16 (out + 2, 0x8000 | (q->flags & 0x0100) | 0x0080 | (unsigned) rcode);
  put16 (out + 4, 1);
  memcpy (out + 12, query + 12, qlen);
  size_t off = q->question_end, count = 0;
  int want = q->qtype == EG_DNS_TYPE_AAAA ? AF_INET6 : AF_INET;
  for (size_t i = 0; rcode == EG_DNS_NOERROR && i < n; i++)
    {
      if (addrs[i].family != want
          || (q->qtype != EG_DNS_TYPE_A && q->qtype != EG_DNS_TYPE_AAAA))
        continue;
      size_t rdlen = want == AF_INET ? 4 : 16;
      if (off + 12 + rdlen > cap)
        break;
      put16 (out + off, 0xc00c); /* the name: a pointer to the question */
      put16 (out + off + 2, q->qtype);
      put16 (out + off + 4, 1);
      put16 (out + off + 6, 0);
      put16 (out + off + 8, 60); /* TTL */
      put16 (out + off + 10, (uint32_t) rdlen);
      memcpy (out + off + 12, addrs[i].bytes, rdlen);
      off += 12 + rdlen;
      count++;
    }
  put16 (out + 6, (uint32_t) count);
  return off;
}
