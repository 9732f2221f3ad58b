/* Just enough rtnetlink (raw NETLINK_ROUTE sockets, no library) to move a
 * network device between namespaces: requests built in a fixed buffer,
 * sent, and answered by an acknowledgement or a dump. */
#ifndef SANDRUN_NETLINK_H
#define SANDRUN_NETLINK_H

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stddef.h>
#include <stdint.h>

#include "sandrun/error.h"

#define SR_NL_REQ_MAX 1024

struct sr_nl_req
{
  union
  {
    struct nlmsghdr hdr;
    char buf[SR_NL_REQ_MAX];
  } u;
};

/* A NETLINK_ROUTE socket of the caller's network namespace, with extended
 * acknowledgements (the kernel's reason comes with its errors). */
int sr_nl_open (sr_error **err);

/* Start a request; NLM_F_REQUEST is added to `flags`. */
void sr_nl_req_init (struct sr_nl_req *r, uint16_t type, uint16_t flags);
/* Append `len` zeroed bytes (the family header: ifinfomsg, ifaddrmsg) and
 * return them. */
void *sr_nl_req_put (struct sr_nl_req *r, size_t len);
/* Append an attribute.  Requests are small by construction: overflowing
 * the buffer is a bug and aborts. */
void sr_nl_req_attr (struct sr_nl_req *r, uint16_t type, const void *data,
                     size_t len);
void sr_nl_req_attr_str (struct sr_nl_req *r, uint16_t type, const char *s);
void sr_nl_req_attr_u32 (struct sr_nl_req *r, uint16_t type, uint32_t v);

/* Called for each message of an answer; a negative return stops (and is
 * returned, with *err set by the callback). */
typedef int (*sr_nl_msg_fn) (const struct nlmsghdr *h, void *data,
                             sr_error **err);

/* Send the request and wait for the kernel's acknowledgement; the messages
 * before it (the answer to a GET) go to `fn` (may be NULL).  A refusal is
 * an error with the kernel's errno and reason. */
int sr_nl_call (int fd, struct sr_nl_req *r, sr_nl_msg_fn fn, void *data,
                sr_error **err);
/* Send a NLM_F_DUMP request; every message of the dump goes to `fn`. */
int sr_nl_dump (int fd, struct sr_nl_req *r, sr_nl_msg_fn fn, void *data,
                sr_error **err);

/* The attribute `type` among those of a message after its family header of
 * `hdrlen` bytes; NULL when absent or malformed. */
const struct rtattr *sr_nl_msg_attr (const struct nlmsghdr *h, size_t hdrlen,
                                     uint16_t type);

#endif
