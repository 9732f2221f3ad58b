/* Parsers for what the sandbox sends the gateway: an HTTP request head, a
 * TLS ClientHello (for its SNI), a DNS query.  All input is hostile: each
 * parser reads only within [buf, buf+len), says when it needs more bytes,
 * and refuses anything it does not understand.  No allocation. */
#ifndef SANDRUN_EGRESS_PARSE_H
#define SANDRUN_EGRESS_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "sandbox/egress_policy.h"

enum eg_parse
{
  EG_PARSE_MORE = 0, /* a prefix of something valid: read more */
  EG_PARSE_DONE = 1,
  EG_PARSE_BAD = -1,
};

/* The most the gateway reads before it decides (request head, ClientHello). */
#define EG_HEAD_MAX 16384

/* Could these first bytes be an HTTP request line ("METHOD ")? */
enum eg_parse eg_http_sniff (const char *buf, size_t len);

struct eg_http_req
{
  size_t head_len; /* bytes up to and including the blank line */
  int is_connect;
  const char *target; /* the request target as sent */
  size_t target_len;
  const char *path; /* origin-form of an absolute-form target (or NULL) */
  size_t path_len;
  char host[EG_NAME_MAX + 1];        /* from the target, else from Host: */
  uint16_t port;                     /* from the target or Host:, else 0 */
  char host_header[EG_NAME_MAX + 1]; /* Host: as sent (normalised), or "" */
  uint16_t host_header_port;
};

/* Parse a request head: EG_PARSE_MORE until the blank line arrives (BAD
 * once EG_HEAD_MAX bytes came without one). */
enum eg_parse eg_http_parse (const char *buf, size_t len,
                             struct eg_http_req *req);

/* The SNI of a TLS ClientHello record; sni is "" when it has none.  BAD
 * when the bytes are not a ClientHello. */
enum eg_parse eg_tls_sni (const uint8_t *buf, size_t len,
                          char sni[EG_NAME_MAX + 1]);

struct eg_dns_query
{
  uint16_t id;
  uint16_t flags;
  char name[EG_NAME_MAX + 1]; /* normalised */
  uint16_t qtype, qclass;
  size_t question_end; /* offset just after the question */
};

#define EG_DNS_NOERROR 0
#define EG_DNS_FORMERR 1
#define EG_DNS_SERVFAIL 2
#define EG_DNS_NXDOMAIN 3
#define EG_DNS_NOTIMP 4
#define EG_DNS_REFUSED 5
#define EG_DNS_TYPE_A 1
#define EG_DNS_TYPE_AAAA 28

/* One standard query with one question, no compression in it. */
enum eg_parse eg_dns_parse_query (const uint8_t *buf, size_t len,
                                  struct eg_dns_query *q);

/* The reply to a parsed query: rcode, and the addresses of the query's type
 * as answers.  Returns its length, 0 when `cap` is too small. */
size_t eg_dns_reply (const uint8_t *query, const struct eg_dns_query *q,
                     int rcode, const struct eg_addr *addrs, size_t n,
                     uint8_t *out, size_t cap);

#endif
