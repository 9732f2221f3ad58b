/* The DNS stub the sandbox's resolver points at: it answers A queries for
 * names on the allow-list (from --add-host or the gateway's own lookup,
 * after the same address checks a connection gets) and refuses every other
 * name, so DNS cannot carry data out.  It remembers which address it gave
 * for which name, so that a plain TCP connection to that address counts as
 * a connection to the name. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "egress/gateway.h"
#include "sandrun/util.h"

#define DNS_MAX 512

struct eg_dns_pending
{
  struct gateway *gw;
  struct sockaddr_storage from;
  socklen_t fromlen;
  uint8_t query[DNS_MAX];
  struct eg_dns_query q;
  struct eg_record rec;
};

void
eg_dnsmap_add (struct gateway *gw, const char *name, const struct eg_addr *a,
               bool declared)
{
  for (size_t i = 0; i < gw->n_dnsmap; i++)
    if (eg_addr_eq (&gw->dnsmap[i].addr, a)
        && strcmp (gw->dnsmap[i].name, name) == 0)
      return;
  size_t i = gw->n_dnsmap < EG_DNSMAP_MAX ? gw->n_dnsmap++
                                          : gw->dnsmap_next++ % EG_DNSMAP_MAX;
  snprintf (gw->dnsmap[i].name, sizeof gw->dnsmap[i].name, "%s", name);
  gw->dnsmap[i].addr = *a;
  gw->dnsmap[i].declared = declared;
}

const char *
eg_dnsmap_find (struct gateway *gw, const struct eg_addr *a, bool *declared)
{
  for (size_t i = 0; i < gw->n_dnsmap; i++)
    if (eg_addr_eq (&gw->dnsmap[i].addr, a))
      {
        *declared = gw->dnsmap[i].declared;
        return gw->dnsmap[i].name;
      }
  return NULL;
}

static void
reply (struct eg_dns_pending *p, int rcode, const struct eg_addr *addrs,
       size_t n)
{
  uint8_t out[DNS_MAX];
  size_t len
      = eg_dns_reply (p->query, &p->q, rcode, addrs, n, out, sizeof out);
  if (len > 0
      && sendto (p->gw->ns.dns_fd, out, len, MSG_DONTWAIT,
                 (struct sockaddr *) &p->from, p->fromlen)
             > 0)
    p->rec.bytes_in = len;
  for (size_t i = 0; rcode == EG_DNS_NOERROR && i < n; i++)
    if (addrs[i].family == AF_INET && !p->rec.has_address)
      {
        p->rec.address = addrs[i];
        p->rec.has_address = true;
      }
  eg_record_write (p->gw, &p->rec);
  free (p);
}

static void
answer (struct eg_dns_pending *p, struct eg_addr *addrs, size_t n,
        bool declared)
{
  struct gateway *gw = p->gw;
  n = eg_filter_addrs (gw, p->q.name, 0, declared, addrs, n, p->rec.reason,
                       sizeof p->rec.reason);
  if (n == 0)
    {
      p->rec.denied = true;
      reply (p, EG_DNS_REFUSED, NULL, 0);
      return;
    }
  p->rec.reason[0] = '\0';
  for (size_t i = 0; i < n; i++)
    eg_dnsmap_add (gw, p->q.name, &addrs[i], declared);
  /* A records only: the sandbox reaches the gateway over IPv4, and the
   * gateway picks the upstream's address family itself */
  reply (p, EG_DNS_NOERROR, addrs, p->q.qtype == EG_DNS_TYPE_A ? n : 0);
}

static void
resolved (void *arg, int status, const struct eg_addr *addrs, size_t n)
{
  struct eg_dns_pending *p = arg;
  p->gw->n_dns_lookups--;
  if (status != ARES_SUCCESS)
    {
      snprintf (p->rec.reason, sizeof p->rec.reason,
                "%s could not be resolved: %s", p->q.name,
                ares_strerror (status));
      reply (p,
             status == ARES_ENOTFOUND || status == ARES_ENODATA
                 ? EG_DNS_NXDOMAIN
                 : EG_DNS_SERVFAIL,
             NULL, 0);
      return;
    }
  struct eg_addr copy[EG_ADDRS_MAX];
  memcpy (copy, addrs, n * sizeof *addrs);
  answer (p, copy, n, false);
}

static void
query (struct gateway *gw, struct eg_dns_pending *p)
{
  snprintf (p->rec.host, sizeof p->rec.host, "%s", p->q.name);
  if (!eg_policy_name_allowed (gw->pol, p->q.name, 0))
    {
      snprintf (p->rec.reason, sizeof p->rec.reason,
                "%s is not on the allow-list", p->q.name);
      p->rec.denied = true;
      reply (p, EG_DNS_REFUSED, NULL, 0);
      return;
    }
  if (p->q.qclass != 1)
    {
      reply (p, EG_DNS_NOTIMP, NULL, 0);
      return;
    }
  const struct eg_addr *h = eg_policy_host (gw->pol, p->q.name);
  if (h != NULL)
    {
      struct eg_addr a = *h;
      answer (p, &a, 1, true);
      return;
    }
  if (gw->n_dns_lookups >= EG_DNS_LOOKUPS_MAX)
    {
      snprintf (p->rec.reason, sizeof p->rec.reason,
                "more than %d DNS queries were waiting for an answer",
                EG_DNS_LOOKUPS_MAX);
      p->rec.denied = true;
      reply (p, EG_DNS_SERVFAIL, NULL, 0);
      return;
    }
  gw->n_dns_lookups++;
  eg_resolve (gw, p->q.name, resolved, p);
}

void
eg_dns_readable (struct gateway *gw)
{
  for (int i = 0; i < 64; i++)
    {
      struct eg_dns_pending *p = xcalloc (1, sizeof *p);
      p->gw = gw;
      p->fromlen = sizeof p->from;
      ssize_t n
          = recvfrom (gw->ns.dns_fd, p->query, sizeof p->query, MSG_DONTWAIT,
                      (struct sockaddr *) &p->from, &p->fromlen);
      if (n < 0)
        {
          free (p);
          return;
        }
      eg_record_start (&p->rec, PROTO_DNS);
      p->rec.port = 53;
      p->rec.bytes_out = (uint64_t) n;
      if (eg_dns_parse_query (p->query, (size_t) n, &p->q) != EG_PARSE_DONE)
        {
          snprintf (p->rec.reason, sizeof p->rec.reason,
                    "the query was not a well-formed DNS question");
          p->rec.denied = true;
          eg_record_write (gw, &p->rec);
          free (p);
          continue;
        }
      query (gw, p);
    }
}
