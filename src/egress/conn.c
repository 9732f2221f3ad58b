/* A TCP connection from the sandbox, up to the relay: read the request
 * head (proxy port) or sniff the first bytes (transparent port), decide by
 * the name, resolve it, connect.  Every refusal answers the client as its
 * protocol expects (HTTP 403/502 with a one-line body, else a reset) and is
 * recorded with its reason. */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress/gateway.h"
#include "sandrun/util.h"

/* linux/netfilter_ipv4.h has it, but clashes with netinet/in.h */
#ifndef SO_ORIGINAL_DST
#define SO_ORIGINAL_DST 80
#endif

static void classify (struct eg_conn *c);

static void __attribute__ ((format (printf, 2, 3)))
set_reason (struct eg_conn *c, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (c->rec.reason, sizeof c->rec.reason, fmt, ap);
  va_end (ap);
}

/* Answer an HTTP client, best effort (a few hundred bytes into an empty
 * socket buffer), or reset a client that speaks something else. */
static void
answer (struct eg_conn *c, int code, const char *status)
{
  if (!c->http_client)
    {
      struct linger l = { .l_onoff = 1, .l_linger = 0 };
      setsockopt (c->cev.fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
      return;
    }
  _cleanup_free_ char *body = xasprintf ("sandrun: %s\n", c->rec.reason);
  _cleanup_free_ char *msg = xasprintf (
      "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
      "Connection: close\r\n\r\n%s",
      code, status, strlen (body), body);
  if (send (c->cev.fd, msg, strlen (msg), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
    return;
}

static void
deny (struct eg_conn *c, int code, const char *status)
{
  c->rec.denied = true;
  answer (c, code, status);
  eg_conn_close (c);
}

static void
fail (struct eg_conn *c)
{
  answer (c, 502, "Bad Gateway");
  eg_conn_close (c);
}

void
eg_conn_accept (struct gateway *gw, int lfd, bool transparent)
{
  for (;;)
    {
      int fd = accept4 (lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0)
        return;
      struct eg_conn *c = xcalloc (1, sizeof *c);
      c->gw = gw;
      c->cev = (struct eg_ev){ .kind = EV_CLIENT, .fd = fd, .p = c };
      c->uev = (struct eg_ev){ .kind = EV_UPSTREAM, .fd = -1, .p = c };
      c->transparent = transparent;
      c->http_client = !transparent;
      eg_record_start (&c->rec, transparent ? PROTO_TCP : PROTO_HTTP);
      c->next = gw->conns;
      if (gw->conns)
        gw->conns->prev = c;
      gw->conns = c;
      gw->n_conns++;
      c->deadline
          = c->rec.start_ms + (transparent ? EG_SNIFF_MS : EG_HEAD_TIMEOUT_MS);
      if (transparent)
        {
          struct sockaddr_in sin;
          socklen_t len = sizeof sin;
          if (getsockopt (fd, SOL_IP, SO_ORIGINAL_DST, &sin, &len) < 0)
            {
              set_reason (c, "the connection's destination is unknown");
              deny (c, 0, NULL);
              continue;
            }
          eg_addr_from_sockaddr ((struct sockaddr *) &sin, &c->orig);
          c->rec.port = ntohs (sin.sin_port);
        }
      if (gw->n_conns > EG_CONN_MAX)
        {
          set_reason (c, "more than %d connections were open at once",
                      EG_CONN_MAX);
          deny (c, 503, "Service Unavailable");
          continue;
        }
      eg_conn_update (c);
    }
}

static void
start_connect (struct eg_conn *c)
{
  int last = 0;
  for (; c->next_addr < c->n_addrs; c->next_addr++)
    {
      const struct eg_addr *a = &c->addrs[c->next_addr];
      struct sockaddr_storage ss = { 0 };
      socklen_t len;
      if (a->family == AF_INET)
        {
          struct sockaddr_in *s = (struct sockaddr_in *) &ss;
          s->sin_family = AF_INET;
          s->sin_port = htons (c->rec.port);
          memcpy (&s->sin_addr, a->bytes, 4);
          len = sizeof *s;
        }
      else
        {
          struct sockaddr_in6 *s = (struct sockaddr_in6 *) &ss;
          s->sin6_family = AF_INET6;
          s->sin6_port = htons (c->rec.port);
          memcpy (&s->sin6_addr, a->bytes, 16);
          len = sizeof *s;
        }
      int fd
          = socket (a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0)
        {
          last = errno;
          continue;
        }
      if (connect (fd, (struct sockaddr *) &ss, len) == 0
          || errno == EINPROGRESS)
        {
          c->uev.fd = fd;
          c->uev.mask = 0;
          c->state = ST_CONNECT;
          c->deadline = eg_now () + EG_CONNECT_TIMEOUT_MS;
          eg_conn_update (c);
          return;
        }
      last = errno;
      close (fd);
    }
  set_reason (c, "could not connect to %s port %u: %s", c->rec.host,
              c->rec.port, strerror (last ? last : ECONNREFUSED));
  fail (c);
}

/* The limits, checked before each connection is let through. */
static bool
over_limits (struct eg_conn *c)
{
  struct gateway *gw = c->gw;
  if (gw->max_bytes && gw->bytes_total >= gw->max_bytes)
    {
      gw->bytes_cap_hit = true;
      set_reason (c, "the sandbox used its network limit of %llu bytes",
                  (unsigned long long) gw->max_bytes);
      return true;
    }
  if (gw->max_conns && gw->conns_opened >= gw->max_conns)
    {
      gw->conns_cap_hit = true;
      set_reason (c, "the sandbox used its limit of %llu connections",
                  (unsigned long long) gw->max_conns);
      return true;
    }
  return false;
}

static void
go (struct eg_conn *c)
{
  if (over_limits (c))
    {
      deny (c, 403, "Forbidden");
      return;
    }
  c->gw->conns_opened++;
  c->counted = true;
  start_connect (c);
}

void
eg_conn_resolved (struct eg_conn *c, int status, const struct eg_addr *addrs,
                  size_t n)
{
  c->resolving = false;
  if (c->closed)
    return;
  if (status != ARES_SUCCESS)
    {
      set_reason (c, "%s could not be resolved: %s", c->rec.host,
                  ares_strerror (status));
      fail (c);
      return;
    }
  c->n_addrs = n < EG_ADDRS_MAX ? n : EG_ADDRS_MAX;
  memcpy (c->addrs, addrs, c->n_addrs * sizeof *addrs);
  c->n_addrs = eg_filter_addrs (c->gw, c->rec.host, c->rec.port, c->declared,
                                c->addrs, c->n_addrs, c->rec.reason,
                                sizeof c->rec.reason);
  if (c->n_addrs == 0)
    {
      deny (c, 403, "Forbidden");
      return;
    }
  c->rec.reason[0] = '\0';
  go (c);
}

static void
resolved_cb (void *arg, int status, const struct eg_addr *addrs, size_t n)
{
  eg_conn_resolved (arg, status, addrs, n);
}

/* No name: the destination address decides (an allowed CIDR, or an address
 * the DNS stub handed out for an allowed name). */
static void
decide_address (struct eg_conn *c)
{
  struct gateway *gw = c->gw;
  char a[64];
  eg_addr_str (&c->orig, a, sizeof a);
  c->by_address = true;
  c->addrs[0] = c->orig;
  c->n_addrs = 1;
  if (eg_policy_addr_allowed (gw->pol, &c->orig, c->rec.port))
    {
      if (c->rec.host[0] == '\0')
        snprintf (c->rec.host, sizeof c->rec.host, "%s", a);
      go (c);
      return;
    }
  bool declared = false;
  const char *name = eg_dnsmap_find (gw, &c->orig, &declared);
  if (name != NULL && c->rec.host[0] == '\0'
      && eg_policy_name_allowed (gw->pol, name, c->rec.port))
    {
      snprintf (c->rec.host, sizeof c->rec.host, "%s", name);
      c->declared = declared;
      eg_conn_resolved (c, ARES_SUCCESS, &c->orig, 1);
      return;
    }
  if (c->rec.host[0] == '\0')
    snprintf (c->rec.host, sizeof c->rec.host, "%s", a);
  set_reason (c, "%s port %u is not on the allow-list", a, c->rec.port);
  deny (c, 403, "Forbidden");
}

static void
decide_name (struct eg_conn *c, const char *name, uint16_t port)
{
  struct gateway *gw = c->gw;
  if (name != c->rec.host)
    snprintf (c->rec.host, sizeof c->rec.host, "%s", name);
  name = c->rec.host;
  c->rec.port = port;
  if (eg_addr_parse (name, &c->orig))
    {
      decide_address (c); /* a bare address, written as the host */
      return;
    }
  if (!eg_policy_name_allowed (gw->pol, name, port))
    {
      if (eg_policy_name_allowed (gw->pol, name, 0))
        set_reason (c, "%s is on the allow-list, but not for port %u", name,
                    port);
      else
        set_reason (c, "%s is not on the allow-list", name);
      deny (c, 403, "Forbidden");
      return;
    }
  const struct eg_addr *h = eg_policy_host (gw->pol, name);
  if (h != NULL)
    {
      c->declared = true;
      eg_conn_resolved (c, ARES_SUCCESS, h, 1);
      return;
    }
  c->state = ST_RESOLVE;
  c->deadline = -1;
  c->resolving = true;
  eg_conn_update (c);
  eg_resolve (gw, name, resolved_cb, c);
}

/* Move what was read so far into the client-to-upstream buffer. */
static void
forward_head (struct eg_conn *c, const char *data, size_t len)
{
  if (c->c2u.data == NULL)
    c->c2u.data = xmalloc (EG_RELAY_BUF);
  memcpy (c->c2u.data + c->c2u.len, data, len);
  c->c2u.len += len;
}

/* A plain HTTP request: forwarded with an absolute-form target rewritten
 * to origin-form (what servers expect from a client, not a proxy). */
static void
take_http (struct eg_conn *c, const struct eg_http_req *req)
{
  size_t rest = c->head_len - req->head_len;
  if (req->path == NULL)
    forward_head (c, c->head, c->head_len);
  else
    {
      size_t before = (size_t) (req->target - c->head);
      const char *after = req->target + req->target_len;
      forward_head (c, c->head, before);
      forward_head (c, req->path, req->path_len);
      forward_head (c, after, (size_t) (c->head + req->head_len - after));
      forward_head (c, c->head + req->head_len, rest);
    }
  c->head_len = 0;
}

static void
classify_proxy (struct eg_conn *c)
{
  struct eg_http_req req;
  enum eg_parse r = eg_http_parse (c->head, c->head_len, &req);
  if (r == EG_PARSE_MORE)
    return;
  if (r == EG_PARSE_BAD)
    {
      set_reason (c,
                  "the request was not a well-formed HTTP request head "
                  "under %d bytes",
                  EG_HEAD_MAX);
      deny (c, 400, "Bad Request");
      return;
    }
  c->rec.port = req.port ? req.port : 80;
  snprintf (c->rec.host, sizeof c->rec.host, "%s", req.host);
  if (req.is_connect)
    {
      c->is_connect = true;
      c->rec.proto = PROTO_HTTPS;
      /* bytes sent ahead of the 200 belong to the tunnel */
      memmove (c->head, c->head + req.head_len, c->head_len - req.head_len);
      c->head_len -= req.head_len;
      decide_name (c, req.host, req.port);
      return;
    }
  if (req.path == NULL)
    {
      set_reason (c, "a request to the proxy needs an absolute http:// URL");
      deny (c, 400, "Bad Request");
      return;
    }
  if (req.host_header[0] && strcmp (req.host_header, req.host) != 0)
    {
      set_reason (c, "Host %s does not match the request's %s",
                  req.host_header, req.host);
      deny (c, 403, "Forbidden");
      return;
    }
  take_http (c, &req);
  decide_name (c, c->rec.host, c->rec.port);
}

static void
classify_transparent (struct eg_conn *c)
{
  char sni[EG_NAME_MAX + 1];
  if ((uint8_t) c->head[0] == 0x16)
    {
      enum eg_parse r = eg_tls_sni ((uint8_t *) c->head, c->head_len, sni);
      if (r == EG_PARSE_MORE)
        return;
      c->rec.proto = PROTO_HTTPS;
      if (r == EG_PARSE_BAD)
        {
          set_reason (c, "the TLS ClientHello could not be read");
          deny (c, 0, NULL);
          return;
        }
      forward_head (c, c->head, c->head_len);
      c->head_len = 0;
      if (sni[0])
        decide_name (c, sni, c->rec.port);
      else
        decide_address (c);
      return;
    }
  enum eg_parse s = eg_http_sniff (c->head, c->head_len);
  if (s == EG_PARSE_MORE)
    return;
  if (s == EG_PARSE_DONE)
    {
      struct eg_http_req req;
      c->rec.proto = PROTO_HTTP;
      c->http_client = true;
      enum eg_parse r = eg_http_parse (c->head, c->head_len, &req);
      if (r == EG_PARSE_MORE)
        return;
      if (r == EG_PARSE_BAD || req.is_connect)
        {
          set_reason (c,
                      "the request was not a well-formed HTTP request "
                      "head under %d bytes",
                      EG_HEAD_MAX);
          deny (c, 400, "Bad Request");
          return;
        }
      take_http (c, &req);
      decide_name (c, req.host, c->rec.port);
      return;
    }
  c->rec.proto = PROTO_TCP;
  forward_head (c, c->head, c->head_len);
  c->head_len = 0;
  decide_address (c);
}

/* The first bytes inside a CONNECT tunnel: a ClientHello must name the
 * CONNECT's host (no domain fronting), an HTTP request too. */
static void
classify_hello (struct eg_conn *c)
{
  const char *host = c->rec.host;
  char sni[EG_NAME_MAX + 1];
  struct eg_addr lit;
  bool literal = eg_addr_parse (host, &lit);
  if ((uint8_t) c->head[0] == 0x16)
    {
      enum eg_parse r = eg_tls_sni ((uint8_t *) c->head, c->head_len, sni);
      if (r == EG_PARSE_MORE)
        return;
      if (r == EG_PARSE_BAD)
        set_reason (c, "the TLS ClientHello could not be read");
      else if (sni[0] == '\0' && !literal)
        set_reason (c,
                    "the TLS ClientHello names no server (SNI) for "
                    "CONNECT %s",
                    host);
      else if (sni[0] != '\0' && strcmp (sni, host) != 0)
        set_reason (c, "SNI %s does not match CONNECT %s", sni, host);
    }
  else if (eg_http_sniff (c->head, c->head_len) == EG_PARSE_DONE)
    {
      struct eg_http_req req;
      enum eg_parse r = eg_http_parse (c->head, c->head_len, &req);
      if (r == EG_PARSE_MORE)
        return;
      c->rec.proto = PROTO_HTTP;
      if (r == EG_PARSE_BAD)
        set_reason (c, "the request in the tunnel was not well-formed HTTP");
      else if (req.host_header[0] && strcmp (req.host_header, host) != 0)
        set_reason (c, "Host %s does not match CONNECT %s", req.host_header,
                    host);
    }
  else if (eg_http_sniff (c->head, c->head_len) == EG_PARSE_MORE)
    return;
  else
    c->rec.proto = PROTO_TCP;
  if (c->rec.reason[0])
    {
      deny (c, 0, NULL);
      return;
    }
  forward_head (c, c->head, c->head_len);
  c->head_len = 0;
  c->state = ST_RELAY;
  c->deadline = eg_now () + EG_IDLE_TIMEOUT_MS;
  c->gw->bytes_total += c->c2u.len;
  c->rec.bytes_out += c->c2u.len;
  eg_conn_update (c);
}

static void
classify (struct eg_conn *c)
{
  if (c->state == ST_HELLO)
    classify_hello (c);
  else if (c->transparent)
    classify_transparent (c);
  else
    classify_proxy (c);
}

static void
read_head (struct eg_conn *c)
{
  if (c->head_len == sizeof c->head)
    {
      set_reason (c, "the request head is larger than %d bytes", EG_HEAD_MAX);
      deny (c, 431, "Request Header Fields Too Large");
      return;
    }
  ssize_t n
      = read (c->cev.fd, c->head + c->head_len, sizeof c->head - c->head_len);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0)
    {
      set_reason (c, "the connection closed before a complete request");
      c->rec.denied = true;
      eg_conn_close (c);
      return;
    }
  if (c->head_len == 0 && c->state == ST_HEAD)
    c->deadline = c->rec.start_ms + EG_HEAD_TIMEOUT_MS;
  c->head_len += (size_t) n;
  classify (c);
}

/* Connected upstream (or failed: the next address). */
static void
connected (struct eg_conn *c)
{
  int e = 0;
  socklen_t len = sizeof e;
  getsockopt (c->uev.fd, SOL_SOCKET, SO_ERROR, &e, &len);
  if (e != 0)
    {
      eg_ev_set (c->gw, &c->uev, 0);
      close (c->uev.fd);
      c->uev.fd = -1;
      c->next_addr++;
      if (c->next_addr < c->n_addrs)
        {
          start_connect (c);
          return;
        }
      set_reason (c, "could not connect to %s port %u: %s", c->rec.host,
                  c->rec.port, strerror (e));
      fail (c);
      return;
    }
  c->rec.address = c->addrs[c->next_addr];
  c->rec.has_address = true;
  if (c->u2c.data == NULL)
    c->u2c.data = xmalloc (EG_RELAY_BUF);
  if (c->is_connect)
    {
      static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
      memcpy (c->u2c.data, ok, sizeof ok - 1);
      c->u2c.len = sizeof ok - 1;
      c->state = ST_HELLO;
      c->http_client
          = false; /* from now on it speaks TLS or its own protocol */
      c->deadline = eg_now () + EG_HEAD_TIMEOUT_MS;
      eg_conn_update (c);
      if (c->head_len > 0)
        classify_hello (c);
      return;
    }
  c->state = ST_RELAY;
  c->deadline = eg_now () + EG_IDLE_TIMEOUT_MS;
  c->gw->bytes_total += c->c2u.len;
  c->rec.bytes_out += c->c2u.len;
  eg_conn_update (c);
}

void
eg_conn_event (struct eg_conn *c, bool upstream, uint32_t events)
{
  switch (c->state)
    {
    case ST_HEAD:
      if (!upstream)
        read_head (c);
      break;
    case ST_CONNECT:
      if (upstream)
        connected (c);
      break;
    case ST_HELLO:
      if (!upstream && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        {
          read_head (c);
          break;
        }
      eg_relay_event (c, upstream, events);
      break;
    case ST_RELAY:
      eg_relay_event (c, upstream, events);
      break;
    case ST_RESOLVE:
      break;
    }
}

void
eg_conn_timeout (struct eg_conn *c)
{
  switch (c->state)
    {
    case ST_HEAD:
      if (c->transparent && c->head_len == 0
          && eg_now () < c->rec.start_ms + EG_HEAD_TIMEOUT_MS)
        {
          decide_address (c); /* a client that waits for the server */
          return;
        }
      set_reason (c, "no complete request arrived within %d s",
                  EG_HEAD_TIMEOUT_MS / 1000);
      deny (c, 408, "Request Timeout");
      return;
    case ST_HELLO:
      if (c->head_len == 0)
        {
          c->rec.proto = PROTO_TCP;
          c->state = ST_RELAY;
          c->deadline = eg_now () + EG_IDLE_TIMEOUT_MS;
          eg_conn_update (c);
          return;
        }
      set_reason (c, "no complete request arrived within %d s",
                  EG_HEAD_TIMEOUT_MS / 1000);
      deny (c, 0, NULL);
      return;
    case ST_CONNECT:
      eg_ev_set (c->gw, &c->uev, 0);
      close (c->uev.fd);
      c->uev.fd = -1;
      if (++c->next_addr < c->n_addrs)
        {
          start_connect (c);
          return;
        }
      set_reason (c, "connecting to %s port %u timed out", c->rec.host,
                  c->rec.port);
      fail (c);
      return;
    case ST_RELAY:
      set_reason (c, "closed after %d s without traffic",
                  EG_IDLE_TIMEOUT_MS / 1000);
      eg_conn_close (c);
      return;
    case ST_RESOLVE:
      return;
    }
}

void
eg_conn_close (struct eg_conn *c)
{
  struct gateway *gw = c->gw;
  if (c->closed)
    return;
  c->closed = true;
  eg_record_write (gw, &c->rec);
  eg_ev_set (gw, &c->cev, 0);
  eg_ev_set (gw, &c->uev, 0);
  sr_close (c->cev.fd);
  sr_close (c->uev.fd);
  c->cev.fd = c->uev.fd = -1;
  free (c->c2u.data);
  free (c->u2c.data);
  c->c2u.data = c->u2c.data = NULL;
  if (c->prev)
    c->prev->next = c->next;
  else
    gw->conns = c->next;
  if (c->next)
    c->next->prev = c->prev;
  gw->n_conns--;
  c->next = gw->graveyard;
  gw->graveyard = c;
}

void
eg_conns_sweep (struct gateway *gw, bool all)
{
  struct eg_conn **pp = &gw->graveyard, *c;
  while ((c = *pp) != NULL)
    if (c->resolving && !all)
      pp = &c->next;
    else
      {
        *pp = c->next;
        free (c);
      }
}
