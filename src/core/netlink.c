/* Minimal rtnetlink client (see netlink.h).  Answers are only taken from
 * the kernel (sender port 0) and for the request just sent (sequence
 * number), and every length is checked before a header is read. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netlink.h"
#include "sandrun/util.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

#define NL_RECV_BUF 32768

static uint32_t nl_seq;

int
sr_nl_open (sr_error **err)
{
  struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
  int one = 1;
  _cleanup_close_ int fd
      = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

  if (fd < 0)
    return sr_fail (err, errno, "netlink socket");
  /* Best effort: older kernels answer without the reason. */
  setsockopt (fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof one);
  setsockopt (fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one);
  if (bind (fd, (struct sockaddr *) &sa, sizeof sa) < 0)
    return sr_fail (err, errno, "netlink bind");
  return steal_fd (&fd);
}

void
sr_nl_req_init (struct sr_nl_req *r, uint16_t type, uint16_t flags)
{
  memset (r, 0, sizeof *r);
  r->u.hdr.nlmsg_len = NLMSG_LENGTH (0);
  r->u.hdr.nlmsg_type = type;
  r->u.hdr.nlmsg_flags = (uint16_t) (flags | NLM_F_REQUEST);
  r->u.hdr.nlmsg_seq = ++nl_seq;
}

/* Not inlined: with the sanitizers, GCC's object-size tracking follows the
 * union into its callers, takes the nlmsghdr member for the object and
 * reports a false overflow (-Wstringop-overflow) on every attribute. */
static __attribute__ ((noinline)) void *
req_grow (struct sr_nl_req *r, size_t len)
{
  size_t at = NLMSG_ALIGN (r->u.hdr.nlmsg_len);

  if (at + len > sizeof r->u.buf)
    abort ();
  r->u.hdr.nlmsg_len = (uint32_t) (at + len);
  return r->u.buf + at;
}

void *
sr_nl_req_put (struct sr_nl_req *r, size_t len)
{
  void *p = req_grow (r, len);
  memset (p, 0, len);
  return p;
}

void
sr_nl_req_attr (struct sr_nl_req *r, uint16_t type, const void *data,
                size_t len)
{
  struct rtattr *rta = req_grow (r, RTA_LENGTH (len));
  rta->rta_type = type;
  rta->rta_len = (unsigned short) RTA_LENGTH (len);
  memcpy (RTA_DATA (rta), data, len);
}

void
sr_nl_req_attr_str (struct sr_nl_req *r, uint16_t type, const char *s)
{
  sr_nl_req_attr (r, type, s, strlen (s) + 1);
}

void
sr_nl_req_attr_u32 (struct sr_nl_req *r, uint16_t type, uint32_t v)
{
  sr_nl_req_attr (r, type, &v, sizeof v);
}

static int
nl_send (int fd, const struct sr_nl_req *r, sr_error **err)
{
  struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
  ssize_t n;

  do
    n = sendto (fd, r->u.buf, r->u.hdr.nlmsg_len, 0, (struct sockaddr *) &sa,
                sizeof sa);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return sr_fail (err, errno, "netlink send");
  return 0;
}

/* The kernel's reason (NLMSGERR_ATTR_MSG), when it gave one. */
static const char *
ext_ack_message (const struct nlmsghdr *h)
{
  const struct nlmsgerr *e = NLMSG_DATA (h);
  size_t off = NLMSG_HDRLEN + sizeof *e;

  if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
    return NULL;
  if (!(h->nlmsg_flags & NLM_F_CAPPED))
    {
      if (e->msg.nlmsg_len < NLMSG_HDRLEN)
        return NULL;
      off += e->msg.nlmsg_len - NLMSG_HDRLEN;
    }
  off = NLMSG_ALIGN (off);
  while (off + sizeof (struct nlattr) <= h->nlmsg_len)
    {
      const struct nlattr *a = (const void *) ((const char *) h + off);
      if (a->nla_len < NLA_HDRLEN || off + a->nla_len > h->nlmsg_len)
        return NULL;
      if (a->nla_type == NLMSGERR_ATTR_MSG && a->nla_len > NLA_HDRLEN
          && ((const char *) a)[a->nla_len - 1] == '\0')
        return (const char *) a + NLA_HDRLEN;
      off += NLA_ALIGN (a->nla_len);
    }
  return NULL;
}

static int
error_message (const struct nlmsghdr *h, sr_error **err)
{
  const struct nlmsgerr *e = NLMSG_DATA (h);
  const char *why;

  if (h->nlmsg_len < NLMSG_LENGTH (sizeof *e))
    return sr_fail (err, EPROTO, "netlink: short error message");
  if (e->error == 0)
    return 1; /* the acknowledgement */
  why = ext_ack_message (h);
  if (why != NULL)
    return sr_fail (err, -e->error, "netlink: %s", why);
  return sr_fail (err, -e->error, "netlink");
}

/* One datagram: each message to `fn` until the acknowledgement (returns 1)
 * or the end of a dump (returns 1); 0 when more datagrams follow. */
static int
nl_handle (const char *buf, size_t len, uint32_t seq, sr_nl_msg_fn fn,
           void *data, sr_error **err)
{
  for (const struct nlmsghdr *h = (const void *) buf; NLMSG_OK (h, len);
       h = NLMSG_NEXT (h, len))
    {
      if (h->nlmsg_seq != seq)
        continue;
      if (h->nlmsg_type == NLMSG_ERROR)
        return error_message (h, err);
      if (h->nlmsg_type == NLMSG_DONE)
        return 1;
      if (fn != NULL && fn (h, data, err) < 0)
        return -1;
    }
  return 0;
}

static int
nl_transact (int fd, struct sr_nl_req *r, sr_nl_msg_fn fn, void *data,
             sr_error **err)
{
  _cleanup_free_ char *buf = xmalloc (NL_RECV_BUF);

  if (nl_send (fd, r, err) < 0)
    return -1;
  for (;;)
    {
      struct sockaddr_nl from;
      socklen_t fromlen = sizeof from;
      ssize_t n = recvfrom (fd, buf, NL_RECV_BUF, MSG_TRUNC,
                            (struct sockaddr *) &from, &fromlen);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return sr_fail (err, errno, "netlink receive");
      if (n > NL_RECV_BUF)
        return sr_fail (err, EMSGSIZE, "netlink: answer truncated");
      if (from.nl_pid != 0)
        continue;
      int r_ = nl_handle (buf, (size_t) n, r->u.hdr.nlmsg_seq, fn, data, err);
      if (r_ != 0)
        return r_ < 0 ? -1 : 0;
    }
}

int
sr_nl_call (int fd, struct sr_nl_req *r, sr_nl_msg_fn fn, void *data,
            sr_error **err)
{
  r->u.hdr.nlmsg_flags |= NLM_F_ACK;
  return nl_transact (fd, r, fn, data, err);
}

int
sr_nl_dump (int fd, struct sr_nl_req *r, sr_nl_msg_fn fn, void *data,
            sr_error **err)
{
  r->u.hdr.nlmsg_flags |= NLM_F_DUMP;
  return nl_transact (fd, r, fn, data, err);
}

const struct rtattr *
sr_nl_msg_attr (const struct nlmsghdr *h, size_t hdrlen, uint16_t type)
{
  size_t off = NLMSG_ALIGN (hdrlen);

  if (h->nlmsg_len < NLMSG_LENGTH (off))
    return NULL;
  size_t len = h->nlmsg_len - NLMSG_LENGTH (off);
  const struct rtattr *a
      = (const void *) ((const char *) NLMSG_DATA (h) + off);
  for (; RTA_OK (a, len); a = RTA_NEXT (a, len))
    if (a->rta_type == type)
      return a;
  return NULL;
}
