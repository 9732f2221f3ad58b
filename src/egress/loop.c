/* The gateway's event loop: one epoll set for the listening sockets, the
 * DNS stub, c-ares, every connection, the control socket (its end means the
 * sandbox is over; a session's marks, control.c) and the termination
 * signals. */
#include <errno.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "egress/gateway.h"
#include "egress/loop.h"
#include "sandrun/util.h"

int64_t
eg_now (void)
{
  return sr_monotonic_ms ();
}

void
eg_ev_set (struct gateway *gw, struct eg_ev *ev, uint32_t mask)
{
  if (ev->fd < 0 || ev->mask == mask)
    return;
  struct epoll_event e = { .events = mask, .data.ptr = ev };
  int op = mask == 0       ? EPOLL_CTL_DEL
           : ev->mask == 0 ? EPOLL_CTL_ADD
                           : EPOLL_CTL_MOD;
  if (epoll_ctl (gw->ep, op, ev->fd, &e) == 0 || op == EPOLL_CTL_DEL)
    ev->mask = mask;
}

static int
next_timeout (struct gateway *gw)
{
  int64_t now = eg_now (), best = -1;
  for (struct eg_conn *c = gw->conns; c != NULL; c = c->next)
    if (c->deadline >= 0 && (best < 0 || c->deadline < best))
      best = c->deadline;
  int t = best < 0 ? -1 : best <= now ? 0 : (int) (best - now);
  int a = eg_resolve_timeout_ms (gw);
  if (a >= 0 && (t < 0 || a < t))
    t = a;
  return t;
}

static void
expire (struct gateway *gw)
{
  int64_t now = eg_now ();
  struct eg_conn *c = gw->conns, *next;
  for (; c != NULL; c = next)
    {
      next = c->next;
      if (!c->closed && c->deadline >= 0 && c->deadline <= now)
        eg_conn_timeout (c);
    }
  eg_resolve_tick (gw);
}

static void
dispatch (struct gateway *gw, struct eg_ev *ev, uint32_t events)
{
  switch (ev->kind)
    {
    case EV_PROXY:
      eg_conn_accept (gw, ev->fd, false);
      break;
    case EV_TRANSPARENT:
      eg_conn_accept (gw, ev->fd, true);
      break;
    case EV_DNS:
      eg_dns_readable (gw);
      break;
    case EV_CONTROL:
      eg_control_readable (gw, ev->fd);
      break;
    case EV_SIGNAL:
      gw->stopping = true;
      break;
    case EV_ARES:
      if (ev->fd >= 0)
        eg_resolve_event (gw, ev, events);
      break;
    case EV_CLIENT:
    case EV_UPSTREAM:
      {
        struct eg_conn *c = ev->p;
        if (!c->closed && ev->fd >= 0)
          eg_conn_event (c, ev->kind == EV_UPSTREAM, events);
        break;
      }
    }
}

static void
add (struct gateway *gw, struct eg_ev *ev, enum eg_ev_kind kind, int fd)
{
  ev->kind = kind;
  ev->fd = fd;
  eg_ev_set (gw, ev, EPOLLIN);
}

int
eg_loop_run (struct gateway *gw, int control_fd, sr_error **err)
{
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGHUP);
  sigprocmask (SIG_BLOCK, &set, NULL);
  _cleanup_close_ int sfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  gw->ep = epoll_create1 (EPOLL_CLOEXEC);
  if (sfd < 0 || gw->ep < 0)
    return sr_fail (err, errno, "set up the event loop");
  add (gw, &gw->ev_proxy, EV_PROXY, gw->ns.proxy_fd);
  add (gw, &gw->ev_transparent, EV_TRANSPARENT, gw->ns.transparent_fd);
  add (gw, &gw->ev_dns, EV_DNS, gw->ns.dns_fd);
  add (gw, &gw->ev_control, EV_CONTROL, control_fd);
  add (gw, &gw->ev_signal, EV_SIGNAL, sfd);
  if (eg_resolve_init (gw, err) < 0)
    return -1;
  while (!gw->stopping)
    {
      struct epoll_event evs[64];
      int n = epoll_wait (gw->ep, evs, 64,
                          eg_marks_timeout (gw, next_timeout (gw)));
      if (n < 0 && errno != EINTR)
        return sr_fail (err, errno, "epoll_wait");
      for (int i = 0; i < n; i++)
        dispatch (gw, evs[i].data.ptr, evs[i].events);
      expire (gw);
      eg_conns_sweep (gw, false);
      eg_marks_flush (gw, n == 0);
    }
  eg_conns_close_all (gw, NULL);
  eg_marks_flush (gw, true);
  ares_destroy (gw->ares); /* pending lookups end, their callbacks run */
  ares_library_cleanup ();
  eg_conns_sweep (gw, true);
  for (struct eg_ev *ev = gw->ares_evs, *next; ev != NULL; ev = next)
    {
      next = ev->next;
      free (ev);
    }
  close (gw->ep);
  return 0;
}
