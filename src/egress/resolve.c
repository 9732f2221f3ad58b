/* Name resolution for the gateway through c-ares, driven by the gateway's
 * epoll loop: c-ares tells which sockets it wants watched
 * (ARES_OPT_SOCK_STATE_CB), the loop hands their events back. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "egress/gateway.h"
#include "sandrun/util.h"

static void
sock_state (void *data, ares_socket_t fd, int readable, int writable)
{
  struct gateway *gw = data;
  struct eg_ev *ev = gw->ares_evs, *unused = NULL;
  for (; ev != NULL && ev->fd != fd; ev = ev->next)
    if (ev->fd < 0)
      unused = ev;
  /* entries are reused, never freed while the loop runs: an event of the
   * current batch may still name one */
  if (!readable && !writable)
    {
      if (ev != NULL)
        {
          eg_ev_set (gw, ev, 0);
          ev->fd = -1;
        }
      return;
    }
  if (ev == NULL && unused != NULL)
    {
      ev = unused;
      ev->fd = fd;
    }
  if (ev == NULL)
    {
      ev = xcalloc (1, sizeof *ev);
      ev->kind = EV_ARES;
      ev->fd = fd;
      ev->next = gw->ares_evs;
      gw->ares_evs = ev;
    }
  eg_ev_set (gw, ev, (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0));
}

int
eg_resolve_init (struct gateway *gw, sr_error **err)
{
  int r = ares_library_init (ARES_LIB_INIT_ALL);
  if (r != ARES_SUCCESS)
    return sr_fail (err, 0, "c-ares: %s", ares_strerror (r));
  struct ares_options o = { 0 };
  o.sock_state_cb = sock_state;
  o.sock_state_cb_data = gw;
  o.lookups
      = (char
             *) "b"; /* DNS only: the host's /etc/hosts is not the sandbox's */
  o.timeout = 2000;
  o.tries = 2;
  r = ares_init_options (&gw->ares, &o,
                         ARES_OPT_SOCK_STATE_CB | ARES_OPT_LOOKUPS
                             | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES);
  if (r != ARES_SUCCESS)
    return sr_fail (err, 0, "c-ares: %s", ares_strerror (r));
  return 0;
}

struct lookup
{
  eg_resolve_cb cb;
  void *arg;
};

static void
lookup_done (void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
  struct lookup *l = arg;
  struct eg_addr addrs[EG_ADDRS_MAX] = { { 0 } };
  size_t n = 0;
  if (status == ARES_SUCCESS && res != NULL)
    for (struct ares_addrinfo_node *nd = res->nodes; nd && n < EG_ADDRS_MAX;
         nd = nd->ai_next)
      if (nd->ai_family == AF_INET || nd->ai_family == AF_INET6)
        eg_addr_from_sockaddr (nd->ai_addr, &addrs[n++]);
  if (status == ARES_SUCCESS && n == 0)
    status = ARES_ENODATA;
  l->cb (l->arg, status, addrs, n);
  if (res != NULL)
    ares_freeaddrinfo (res);
  free (l);
}

void
eg_resolve (struct gateway *gw, const char *name, eg_resolve_cb cb, void *arg)
{
  struct lookup *l = xmalloc (sizeof *l);
  l->cb = cb;
  l->arg = arg;
  struct ares_addrinfo_hints hints = { .ai_family = AF_UNSPEC };
  ares_getaddrinfo (gw->ares, name, NULL, &hints, lookup_done, l);
}

void
eg_resolve_event (struct gateway *gw, struct eg_ev *ev, uint32_t events)
{
  ares_socket_t fd = ev->fd;
  ares_process_fd (gw->ares,
                   events & (EPOLLIN | EPOLLERR | EPOLLHUP) ? fd
                                                            : ARES_SOCKET_BAD,
                   events & EPOLLOUT ? fd : ARES_SOCKET_BAD);
}

int
eg_resolve_timeout_ms (struct gateway *gw)
{
  struct timeval tv, *t = ares_timeout (gw->ares, NULL, &tv);
  if (t == NULL)
    return -1;
  return (int) (t->tv_sec * 1000 + (t->tv_usec + 999) / 1000);
}

void
eg_resolve_tick (struct gateway *gw)
{
  ares_process_fd (gw->ares, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
}

size_t
eg_filter_addrs (struct gateway *gw, const char *name, uint16_t port,
                 bool declared, struct eg_addr *addrs, size_t n, char *why,
                 size_t why_len)
{
  size_t kept = 0;
  for (size_t i = 0; i < n; i++)
    {
      const char *bad
          = eg_policy_addr_forbidden (gw->pol, &addrs[i], port, declared);
      if (bad == NULL)
        {
          addrs[kept++] = addrs[i];
          continue;
        }
      if (why[0] == '\0')
        {
          char a[64];
          eg_addr_str (&addrs[i], a, sizeof a);
          snprintf (why, why_len, "%s is %s (%s resolves to it)", a, bad,
                    name);
        }
    }
  return kept;
}
