/* The egress gateway's pure parts: the policy (--allow-host, --add-host,
 * the forbidden address ranges) and the parsers of HTTP heads, TLS
 * ClientHellos and DNS queries; the fuzz seeds are replayed too. */
#include <arpa/inet.h>
#include <dirent.h>
#include <stdint.h>

#include "egress/parse.h"
#include "sandbox/egress_policy.h"
#include "sandrun/util.h"
#include "unit.h"

static struct eg_addr
A (const char *s)
{
  struct eg_addr a;
  if (!eg_addr_parse (s, &a))
    abort ();
  return a;
}

static void
test_policy (void)
{
  struct eg_policy p = { 0 };
  sr_error *err = NULL;
  CHECK (eg_policy_add_rule (&p, "API.Example.com", &err) == 0, "a name");
  CHECK (eg_policy_add_rule (&p, "*.pythonhosted.org", &err) == 0,
         "a wildcard");
  CHECK (eg_policy_add_rule (&p, "db.example.com:5432", &err) == 0,
         "a name:port");
  CHECK (eg_policy_add_rule (&p, "10.9.0.0/16", &err) == 0, "a CIDR");
  CHECK (eg_policy_add_rule (&p, "[2001:db8::]:8443", &err) == 0, "[v6]:port");
  CHECK (eg_policy_add_rule (&p, "x:0", &err) < 0, "port 0 refused");
  CHECK_STR (
      err ? err->msg : NULL,
      "--allow-host \"x:0\": expected a port number 1-65535 after the colon",
      "the port error names the option");
  sr_error_freep (&err);
  CHECK (eg_policy_add_rule (&p, "bad name!", &err) < 0, "a bad name refused");
  sr_error_freep (&err);
  CHECK (eg_policy_add_rule (&p, "10.0.0.0/33", &err) < 0,
         "a bad prefix refused");
  sr_error_freep (&err);
  CHECK (eg_policy_add_host (&p, "web.test:10.200.0.2", &err) == 0,
         "--add-host");
  CHECK (eg_policy_add_host (&p, "web.test", &err) < 0,
         "--add-host without address");
  sr_error_freep (&err);

  CHECK (eg_policy_name_allowed (&p, "api.example.com", 443), "name, 443");
  CHECK (eg_policy_name_allowed (&p, "api.example.com", 80), "name, 80");
  CHECK (!eg_policy_name_allowed (&p, "api.example.com", 22), "name, not 22");
  CHECK (!eg_policy_name_allowed (&p, "evil.example.com", 443),
         "another name");
  CHECK (!eg_policy_name_allowed (&p, "xapi.example.com", 443),
         "a suffix is not a match");
  CHECK (eg_policy_name_allowed (&p, "files.pythonhosted.org", 443),
         "wildcard match");
  CHECK (!eg_policy_name_allowed (&p, "pythonhosted.org", 443),
         "wildcard: not the apex");
  CHECK (!eg_policy_name_allowed (&p, "evilpythonhosted.org", 443),
         "wildcard: label boundary");
  CHECK (eg_policy_name_allowed (&p, "db.example.com", 5432), "explicit port");
  CHECK (!eg_policy_name_allowed (&p, "db.example.com", 443),
         "explicit port only");

  struct eg_addr a = A ("10.9.3.4"), b = A ("10.10.0.1");
  CHECK (eg_policy_addr_allowed (&p, &a, 443), "address in the CIDR");
  CHECK (!eg_policy_addr_allowed (&p, &b, 443), "address outside the CIDR");
  CHECK (eg_policy_addr_forbidden (&p, &a, 443, false) == NULL,
         "an allowed CIDR lifts the private-range rule");
  CHECK_STR (eg_policy_addr_forbidden (&p, &b, 443, false),
             "a private address", "private range by name");
  CHECK (eg_policy_addr_forbidden (&p, &b, 443, true) == NULL,
         "--add-host may name a private address");
  struct eg_addr meta = A ("169.254.169.254"), lo = A ("127.0.0.1"),
                 mapped = A ("::ffff:169.254.169.254"),
                 pub = A ("93.184.216.34");
  CHECK_STR (eg_policy_addr_forbidden (&p, &meta, 80, true),
             "a link-local address",
             "metadata stays forbidden even via --add-host");
  CHECK_STR (eg_policy_addr_forbidden (&p, &lo, 80, true),
             "a loopback address", "loopback stays forbidden");
  CHECK_STR (eg_policy_addr_forbidden (&p, &mapped, 80, false),
             "a link-local address",
             "v4-mapped v6 is classified as its v4 address");
  CHECK (eg_policy_addr_forbidden (&p, &pub, 443, false) == NULL,
         "a public address");
  p.own = xmalloc (sizeof *p.own);
  p.own[0] = pub;
  p.n_own = 1;
  CHECK_STR (eg_policy_addr_forbidden (&p, &pub, 443, true),
             "one of the host's own addresses", "the host's own address");
  const struct eg_addr *h = eg_policy_host (&p, "web.test");
  struct eg_addr want = A ("10.200.0.2");
  CHECK (h != NULL && eg_addr_eq (h, &want), "--add-host lookup");
  eg_policy_clear (&p);
}

static void
test_http (void)
{
  struct eg_http_req r;
  const char *c = "CONNECT api.example.com:443 HTTP/1.1\r\nHost: "
                  "api.example.com:443\r\n\r\nXX";
  CHECK (eg_http_parse (c, strlen (c), &r) == EG_PARSE_DONE, "CONNECT parses");
  CHECK (r.is_connect && r.port == 443
             && strcmp (r.host, "api.example.com") == 0,
         "CONNECT target");
  CHECK (r.head_len == strlen (c) - 2,
         "head length excludes the tunnel bytes");
  const char *g
      = "GET http://Web.Test:8080/a?b HTTP/1.1\r\nHost: web.test:8080\r\n\r\n";
  CHECK (eg_http_parse (g, strlen (g), &r) == EG_PARSE_DONE,
         "absolute-form parses");
  CHECK (r.port == 8080 && strcmp (r.host, "web.test") == 0,
         "absolute-form host");
  CHECK (r.path_len == 4 && memcmp (r.path, "/a?b", 4) == 0,
         "origin-form path");
  const char *o
      = "GET / HTTP/1.1\r\nUser-Agent: x\r\nhOsT:  web.test \r\n\r\n";
  CHECK (eg_http_parse (o, strlen (o), &r) == EG_PARSE_DONE
             && strcmp (r.host, "web.test") == 0,
         "origin-form takes Host:");
  CHECK (eg_http_parse (o, 10, &r) == EG_PARSE_MORE, "a prefix wants more");
  const char *bad[] = {
    "GET / HTTP/1.1\r\n\r\n",                       /* no Host */
    "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", /* two */
    "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", /* folding */
    "CONNECT host HTTP/1.1\r\n\r\n",                /* no port */
    "GET http://u@host/ HTTP/1.1\r\n\r\n",          /* userinfo */
    "get / HTTP/1.1\r\nHost: a\r\n\r\n",            /* method case */
    "GET / HTTP/2.0\r\nHost: a\r\n\r\n",
    "GET http://a:99999/ HTTP/1.1\r\n\r\n",
  };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    CHECK (eg_http_parse (bad[i], strlen (bad[i]), &r) == EG_PARSE_BAD,
           "refused: %zu", i);
  static char big[EG_HEAD_MAX + 10];
  memset (big, 'a', sizeof big);
  memcpy (big, "GET / HTTP/1.1\r\nX: ", 19);
  CHECK (eg_http_parse (big, sizeof big, &r) == EG_PARSE_BAD,
         "an endless head is refused");
  CHECK (eg_http_sniff ("GE", 2) == EG_PARSE_MORE, "sniff: prefix");
  CHECK (eg_http_sniff ("GET /", 5) == EG_PARSE_DONE, "sniff: request");
  CHECK (eg_http_sniff ("\x16\x03", 2) == EG_PARSE_BAD, "sniff: TLS");
}

/* A minimal ClientHello with one server_name. */
static size_t
hello (uint8_t *b, const char *name)
{
  size_t n = strlen (name), o = 0;
  uint8_t body[512];
  body[o++] = 3, body[o++] = 3;
  memset (body + o, 7, 32), o += 32;
  body[o++] = 0; /* session id */
  body[o++] = 0, body[o++] = 2, body[o++] = 0x13, body[o++] = 1;
  body[o++] = 1, body[o++] = 0; /* compression */
  size_t ext = 4 + 5 + n;
  body[o++] = 0, body[o++] = (uint8_t) ext;
  body[o++] = 0, body[o++] = 0; /* server_name */
  body[o++] = 0, body[o++] = (uint8_t) (5 + n);
  body[o++] = 0, body[o++] = (uint8_t) (3 + n);
  body[o++] = 0, body[o++] = 0, body[o++] = (uint8_t) n;
  memcpy (body + o, name, n), o += n;
  b[0] = 0x16, b[1] = 3, b[2] = 1, b[3] = 0, b[4] = (uint8_t) (o + 4);
  b[5] = 1, b[6] = 0, b[7] = 0, b[8] = (uint8_t) o;
  memcpy (b + 9, body, o);
  return o + 9;
}

static void
test_tls (void)
{
  uint8_t b[600];
  char sni[EG_NAME_MAX + 1];
  size_t n = hello (b, "API.example.com");
  CHECK (eg_tls_sni (b, n, sni) == EG_PARSE_DONE
             && strcmp (sni, "api.example.com") == 0,
         "SNI read and normalised");
  CHECK (eg_tls_sni (b, n - 3, sni) == EG_PARSE_MORE,
         "a truncated hello wants more");
  b[9 + 2 + 32] = 200; /* session id longer than the message */
  CHECK (eg_tls_sni (b, n, sni) == EG_PARSE_BAD, "bad session id length");
  n = hello (b, "a..b");
  CHECK (eg_tls_sni (b, n, sni) == EG_PARSE_BAD, "a bad name");
  CHECK (eg_tls_sni ((const uint8_t *) "GET", 3, sni) == EG_PARSE_BAD,
         "not TLS");
}

static void
test_dns (void)
{
  const uint8_t q[]
      = { 0x12, 0x34, 0x01, 0x00, 0,   1,   0,   0,   0, 0, 0, 0, 3,
          'w',  'e',  'b',  4,    't', 'e', 's', 't', 0, 0, 1, 0, 1 };
  struct eg_dns_query d;
  CHECK (eg_dns_parse_query (q, sizeof q, &d) == EG_PARSE_DONE,
         "a query parses");
  CHECK (d.id == 0x1234 && d.qtype == 1 && strcmp (d.name, "web.test") == 0,
         "its fields");
  uint8_t out[512];
  struct eg_addr a = A ("10.200.0.2"), six = A ("2001:db8::1");
  struct eg_addr both[2] = { six, a };
  size_t n = eg_dns_reply (q, &d, 0, both, 2, out, sizeof out);
  CHECK (n == sizeof q + 16, "one A answer (the AAAA skipped)");
  CHECK (out[2] == 0x81 && out[3] == 0x80 && out[7] == 1, "flags and count");
  CHECK (memcmp (out + n - 4, a.bytes, 4) == 0, "the address");
  n = eg_dns_reply (q, &d, EG_DNS_REFUSED, NULL, 0, out, sizeof out);
  CHECK (n == sizeof q && (out[3] & 0xf) == EG_DNS_REFUSED, "refused");
  uint8_t p[sizeof q];
  memcpy (p, q, sizeof q);
  p[12] = 0xc0; /* compression pointer in the question */
  CHECK (eg_dns_parse_query (p, sizeof p, &d) == EG_PARSE_BAD,
         "pointer refused");
  memcpy (p, q, sizeof q);
  p[2] = 0x81; /* a response */
  CHECK (eg_dns_parse_query (p, sizeof p, &d) == EG_PARSE_BAD,
         "response refused");
  CHECK (eg_dns_parse_query (q, sizeof q - 1, &d) == EG_PARSE_BAD,
         "truncated refused");
}

/* Every fuzz seed goes through its parser once (and must not crash). */
static void
test_corpus (void)
{
  const char *kinds[] = { "http", "tls", "dns" };
  for (size_t k = 0; k < ARRAY_SIZE (kinds); k++)
    {
      _cleanup_free_ char *dir
          = xasprintf ("%s/egress-%s", EGRESS_FUZZ_CORPUS, kinds[k]);
      DIR *d = opendir (dir);
      CHECK (d != NULL, "corpus %s exists", kinds[k]);
      if (d == NULL)
        continue;
      struct dirent *e;
      while ((e = readdir (d)) != NULL)
        {
          if (e->d_name[0] == '.')
            continue;
          char *buf = NULL;
          size_t len = 0;
          sr_error *err = NULL;
          if (sr_read_file_at (dirfd (d), e->d_name, 1 << 20, &buf, &len, &err)
              < 0)
            {
              sr_error_free (err);
              continue;
            }
          struct eg_http_req r;
          char sni[EG_NAME_MAX + 1];
          struct eg_dns_query q;
          if (k == 0)
            eg_http_parse (buf, len, &r);
          else if (k == 1)
            eg_tls_sni ((uint8_t *) buf, len, sni);
          else
            eg_dns_parse_query ((uint8_t *) buf, len, &q);
          free (buf);
        }
      closedir (d);
    }
}

int
main (void)
{
  test_policy ();
  test_http ();
  test_tls ();
  test_dns ();
  test_corpus ();
  return unit_finish ();
}
