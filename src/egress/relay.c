/* Relaying an allowed connection: one buffer per direction, a half-close
 * passed on when a side finishes, every byte counted against the sandbox's
 * network limit. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress/gateway.h"
#include "sandrun/util.h"

void
eg_conn_update (struct eg_conn *c)
{
  uint32_t cm = 0, um = 0;
  switch (c->state)
    {
    case ST_HEAD:
      cm = EPOLLIN;
      break;
    case ST_CONNECT:
      um = EPOLLOUT;
      break;
    case ST_HELLO:
    case ST_RELAY:
      if (c->state == ST_HELLO || (!c->c_eof && c->c2u.len == 0))
        cm |= EPOLLIN;
      if (c->u2c.len > 0)
        cm |= EPOLLOUT;
      if (!c->u_eof && c->u2c.len == 0)
        um |= EPOLLIN;
      if (c->c2u.len > 0)
        um |= EPOLLOUT;
      break;
    case ST_RESOLVE:
      break;
    }
  eg_ev_set (c->gw, &c->cev, cm);
  eg_ev_set (c->gw, &c->uev, um);
}

/* How many bytes may still pass: the rest of --net-max-bytes. */
static size_t
budget (struct gateway *gw, size_t want)
{
  if (gw->max_bytes == 0)
    return want;
  uint64_t left
      = gw->bytes_total < gw->max_bytes ? gw->max_bytes - gw->bytes_total : 0;
  return left < want ? (size_t) left : want;
}

void
eg_conns_close_all (struct gateway *gw, const char *reason)
{
  struct eg_conn *c = gw->conns, *next;
  for (; c != NULL; c = next)
    {
      next = c->next;
      if (reason != NULL && c->rec.reason[0] == '\0')
        snprintf (c->rec.reason, sizeof c->rec.reason, "%s", reason);
      eg_conn_close (c);
    }
}

static void
limit_hit (struct gateway *gw)
{
  gw->bytes_cap_hit = true;
  _cleanup_free_ char *why = xasprintf (
      "closed when the sandbox used its network limit of %llu bytes",
      (unsigned long long) gw->max_bytes);
  eg_conns_close_all (gw, why);
}

/* Read from `fd` into `b`; false when the connection must close (then *eof
 * or an error).  `in`: counts as bytes_in, else bytes_out on its way. */
static int
fill (struct eg_conn *c, int fd, struct eg_buf *b, bool *eof, uint64_t *count)
{
  struct gateway *gw = c->gw;
  if (b->data == NULL)
    b->data = xmalloc (EG_RELAY_BUF);
  size_t n = budget (gw, EG_RELAY_BUF);
  if (n == 0)
    {
      char x;
      ssize_t p = recv (fd, &x, 1, MSG_PEEK | MSG_DONTWAIT);
      if (p > 0)
        return -2; /* more bytes than the limit allows */
      if (p == 0)
        *eof = true;
      return p < 0 && errno != EAGAIN ? -1 : 0;
    }
  ssize_t r = read (fd, b->data, n);
  if (r < 0)
    return errno == EAGAIN || errno == EINTR ? 0 : -1;
  if (r == 0)
    {
      *eof = true;
      return 0;
    }
  b->len = (size_t) r;
  b->off = 0;
  *count += (uint64_t) r;
  gw->bytes_total += (uint64_t) r;
  return 0;
}

static int
drain (int fd, struct eg_buf *b)
{
  if (b->len == 0)
    return 0;
  ssize_t w = send (fd, b->data + b->off, b->len - b->off, MSG_NOSIGNAL);
  if (w < 0)
    return errno == EAGAIN || errno == EINTR ? 0 : -1;
  b->off += (size_t) w;
  if (b->off == b->len)
    b->len = b->off = 0;
  return 0;
}

void
eg_relay_event (struct eg_conn *c, bool upstream, uint32_t events)
{
  int cfd = c->cev.fd, ufd = c->uev.fd, r = 0;
  bool readable = events & (EPOLLIN | EPOLLHUP | EPOLLERR);
  if (upstream)
    {
      if (events & EPOLLOUT)
        r = drain (ufd, &c->c2u);
      if (r == 0 && readable && !c->u_eof && c->u2c.len == 0)
        r = fill (c, ufd, &c->u2c, &c->u_eof, &c->rec.bytes_in);
    }
  else
    {
      if (events & EPOLLOUT)
        r = drain (cfd, &c->u2c);
      if (r == 0 && readable && c->state == ST_RELAY && !c->c_eof
          && c->c2u.len == 0)
        r = fill (c, cfd, &c->c2u, &c->c_eof, &c->rec.bytes_out);
    }
  if (r == -2)
    {
      limit_hit (c->gw);
      return;
    }
  if (r < 0)
    {
      eg_conn_close (c);
      return;
    }
  /* pass a finished direction's end on, once its bytes are through */
  if (c->c_eof && c->c2u.len == 0 && !c->u_shut)
    {
      shutdown (ufd, SHUT_WR);
      c->u_shut = true;
    }
  if (c->u_eof && c->u2c.len == 0 && !c->c_shut)
    {
      shutdown (cfd, SHUT_WR);
      c->c_shut = true;
    }
  if (c->c_shut && c->u_shut)
    {
      eg_conn_close (c);
      return;
    }
  c->deadline = eg_now () + EG_IDLE_TIMEOUT_MS;
  eg_conn_update (c);
}
