/* The egress policy: parsing --allow-host / --add-host, matching names and
 * addresses, and the address ranges that are never reached by name. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "egress_policy.h"
#include "sandrun/util.h"

void
eg_addr_str (const struct eg_addr *a, char *buf, size_t len)
{
  if (inet_ntop (a->family, a->bytes, buf, len) == NULL && len > 0)
    buf[0] = '\0';
}

bool
eg_addr_parse (const char *s, struct eg_addr *a)
{
  memset (a, 0, sizeof *a);
  if (inet_pton (AF_INET, s, a->bytes) == 1)
    {
      a->family = AF_INET;
      return true;
    }
  if (inet_pton (AF_INET6, s, a->bytes) == 1)
    {
      a->family = AF_INET6;
      return true;
    }
  return false;
}

void
eg_addr_from_sockaddr (const struct sockaddr *sa, struct eg_addr *a)
{
  memset (a, 0, sizeof *a);
  a->family = sa->sa_family;
  if (sa->sa_family == AF_INET)
    memcpy (a->bytes, &((const struct sockaddr_in *) sa)->sin_addr, 4);
  else if (sa->sa_family == AF_INET6)
    memcpy (a->bytes, &((const struct sockaddr_in6 *) sa)->sin6_addr, 16);
}

bool
eg_addr_eq (const struct eg_addr *a, const struct eg_addr *b)
{
  size_t n = a->family == AF_INET ? 4 : 16;
  return a->family == b->family && memcmp (a->bytes, b->bytes, n) == 0;
}

static bool
addr_in (const struct eg_addr *a, const struct eg_addr *net, unsigned prefix)
{
  if (a->family != net->family)
    return false;
  unsigned full = prefix / 8, rest = prefix % 8;
  if (memcmp (a->bytes, net->bytes, full) != 0)
    return false;
  if (rest == 0)
    return true;
  uint8_t mask = (uint8_t) (0xff << (8 - rest));
  return (a->bytes[full] & mask) == (net->bytes[full] & mask);
}

bool
eg_name_normalise (const char *in, size_t len, char out[EG_NAME_MAX + 1])
{
  if (len > 0 && in[len - 1] == '.')
    len--;
  if (len == 0 || len > EG_NAME_MAX)
    return false;
  size_t label = 0;
  for (size_t i = 0; i < len; i++)
    {
      unsigned char c = (unsigned char) in[i];
      if (c == '.')
        {
          if (label == 0)
            return false;
          label = 0;
        }
      else if (isalnum (c) || c == '-' || c == '_')
        {
          if (++label > 63)
            return false;
        }
      else
        return false;
      out[i] = (char) tolower (c);
    }
  out[len] = '\0';
  return label > 0;
}

static bool
port_matches (uint16_t rule, uint16_t port)
{
  if (port == 0)
    return true;
  return rule == 0 ? (port == 80 || port == 443) : rule == port;
}

/* Split "X:PORT" (or "[v6]:PORT"); *port stays 0 without one.  Returns the
 * pattern, malloc'd, or NULL when the port is not a number in 1..65535. */
static char *
split_port (const char *arg, uint16_t *port)
{
  *port = 0;
  const char *colon = strrchr (arg, ':');
  if (arg[0] == '[')
    {
      const char *end = strchr (arg, ']');
      if (end == NULL)
        return NULL;
      if (end[1] == '\0')
        return xstrndup (arg + 1, (size_t) (end - arg - 1));
      if (end[1] != ':')
        return NULL;
      colon = end + 1;
      arg++;
    }
  else if (colon == NULL || strchr (arg, ':') != colon)
    return xstrdup (arg); /* no port, or a bare IPv6 address */
  long v;
  if (sr_parse_long (colon + 1, &v) < 0 || v < 1 || v > 65535)
    return NULL;
  *port = (uint16_t) v;
  size_t n = (size_t) (colon - arg);
  if (n > 0 && arg[n - 1] == ']')
    n--;
  return xstrndup (arg, n);
}

static bool
parse_cidr (const char *s, struct eg_rule *r)
{
  _cleanup_free_ char *copy = xstrdup (s);
  char *slash = strchr (copy, '/');
  if (slash != NULL)
    *slash = '\0';
  if (!eg_addr_parse (copy, &r->net))
    return false;
  unsigned max = r->net.family == AF_INET ? 32 : 128;
  r->prefix = max;
  if (slash != NULL)
    {
      long v;
      if (sr_parse_long (slash + 1, &v) < 0 || v < 0 || v > (long) max)
        return false;
      r->prefix = (unsigned) v;
    }
  return true;
}

int
eg_policy_add_rule (struct eg_policy *p, const char *arg, sr_error **err)
{
  struct eg_rule r = { 0 };
  _cleanup_free_ char *pat = split_port (arg, &r.port);
  if (pat == NULL)
    return sr_fail (err, 0,
                    "--allow-host \"%s\": expected a port number 1-65535 "
                    "after the colon",
                    arg);
  if (!parse_cidr (pat, &r))
    {
      const char *name = pat;
      if (str_has_prefix (pat, "*."))
        {
          r.wildcard = true;
          name = pat + 2;
        }
      char norm[EG_NAME_MAX + 1];
      if (!eg_name_normalise (name, strlen (name), norm)
          || strchr (pat, '/') != NULL)
        return sr_fail (err, 0,
                        "--allow-host \"%s\": expected a host name "
                        "(api.example.com), a wildcard (*.example.com) or "
                        "an address/CIDR, with an optional :PORT",
                        arg);
      r.name = xstrdup (norm);
    }
  p->rules = xrealloc (p->rules, (p->n_rules + 1) * sizeof *p->rules);
  p->rules[p->n_rules++] = r;
  return 0;
}

int
eg_policy_add_host (struct eg_policy *p, const char *arg, sr_error **err)
{
  const char *colon = strchr (arg, ':');
  char norm[EG_NAME_MAX + 1];
  struct eg_host h = { 0 };
  if (colon == NULL || !eg_name_normalise (arg, (size_t) (colon - arg), norm)
      || !eg_addr_parse (colon + 1, &h.addr))
    return sr_fail (err, 0,
                    "--add-host \"%s\": expected NAME:ADDRESS, such as "
                    "api.internal:10.0.0.5",
                    arg);
  h.name = xstrdup (norm);
  p->hosts = xrealloc (p->hosts, (p->n_hosts + 1) * sizeof *p->hosts);
  p->hosts[p->n_hosts++] = h;
  return 0;
}

void
eg_policy_clear (struct eg_policy *p)
{
  for (size_t i = 0; i < p->n_rules; i++)
    free (p->rules[i].name);
  for (size_t i = 0; i < p->n_hosts; i++)
    free (p->hosts[i].name);
  free (p->rules);
  free (p->hosts);
  free (p->own);
  memset (p, 0, sizeof *p);
}

static bool
name_matches (const struct eg_rule *r, const char *name)
{
  if (!r->wildcard)
    return strcmp (r->name, name) == 0;
  size_t n = strlen (name), s = strlen (r->name);
  return n > s + 1 && name[n - s - 1] == '.'
         && strcmp (name + n - s, r->name) == 0;
}

bool
eg_policy_name_allowed (const struct eg_policy *p, const char *name,
                        uint16_t port)
{
  for (size_t i = 0; i < p->n_rules; i++)
    if (p->rules[i].name != NULL && name_matches (&p->rules[i], name)
        && port_matches (p->rules[i].port, port))
      return true;
  return false;
}

bool
eg_policy_addr_allowed (const struct eg_policy *p, const struct eg_addr *a,
                        uint16_t port)
{
  for (size_t i = 0; i < p->n_rules; i++)
    if (p->rules[i].name == NULL
        && addr_in (a, &p->rules[i].net, p->rules[i].prefix)
        && port_matches (p->rules[i].port, port))
      return true;
  return false;
}

const struct eg_addr *
eg_policy_host (const struct eg_policy *p, const char *name)
{
  for (size_t i = 0; i < p->n_hosts; i++)
    if (strcmp (p->hosts[i].name, name) == 0)
      return &p->hosts[i].addr;
  return NULL;
}

struct range
{
  const char *net;
  unsigned prefix;
  int kind; /* 0 loopback, 1 link-local, 2 private, 3 reserved */
};

static const struct range ranges[] = {
  { "127.0.0.0", 8, 0 },    { "::1", 128, 0 },       { "169.254.0.0", 16, 1 },
  { "fe80::", 10, 1 },      { "10.0.0.0", 8, 2 },    { "172.16.0.0", 12, 2 },
  { "192.168.0.0", 16, 2 }, { "100.64.0.0", 10, 2 }, { "fc00::", 7, 2 },
  { "0.0.0.0", 8, 3 },      { "::", 128, 3 },        { "224.0.0.0", 3, 3 },
  { "192.0.0.0", 24, 3 },   { "192.0.2.0", 24, 3 },  { "198.18.0.0", 15, 3 },
  { "ff00::", 8, 3 },
};

static const char *const kind_words[]
    = { "a loopback address", "a link-local address", "a private address",
        "a reserved address" };

const char *
eg_policy_addr_forbidden (const struct eg_policy *p, const struct eg_addr *a,
                          uint16_t port, bool declared)
{
  if (eg_policy_addr_allowed (p, a, port))
    return NULL;
  struct eg_addr v = *a;
  static const uint8_t mapped[12]
      = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
  if (v.family == AF_INET6 && memcmp (v.bytes, mapped, 12) == 0)
    {
      /* ::ffff:a.b.c.d is the IPv4 address a.b.c.d */
      v.family = AF_INET;
      memmove (v.bytes, v.bytes + 12, 4);
      memset (v.bytes + 4, 0, 12);
      if (eg_policy_addr_allowed (p, &v, port))
        return NULL;
    }
  for (size_t i = 0; i < ARRAY_SIZE (ranges); i++)
    {
      struct eg_addr net;
      eg_addr_parse (ranges[i].net, &net);
      if (!addr_in (&v, &net, ranges[i].prefix))
        continue;
      if (ranges[i].kind == 2 && declared)
        break;
      return kind_words[ranges[i].kind];
    }
  for (size_t i = 0; i < p->n_own; i++)
    if (eg_addr_eq (&v, &p->own[i]))
      return "one of the host's own addresses";
  return NULL;
}
