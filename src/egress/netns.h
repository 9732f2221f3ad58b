/* The sandbox's network namespace, as the gateway makes it: created by the
 * gateway (so it is owned by the host's user namespace, and nothing in the
 * sandbox's own user namespace can administer it), loopback only, with
 * nftables rules that send every TCP connection to the gateway's
 * transparent port and every DNS query to its stub, and drop the rest. */
#ifndef SANDRUN_EGRESS_NETNS_H
#define SANDRUN_EGRESS_NETNS_H

#include "sandrun/error.h"

#define EG_PROXY_PORT 3128       /* HTTP(S)_PROXY */
#define EG_TRANSPARENT_PORT 3129 /* where every other TCP connection lands */
#define EG_DNS_PORT 53
/* An address on the namespace's loopback device, for the default route
 * that lets connections to any address start (and be redirected); from the
 * documentation range, so it never names a real host. */
#define EG_LOCAL_ADDR "192.0.2.1"

struct eg_netns
{
  int nsfd;           /* the namespace (nsfs), for the sandbox to join */
  int proxy_fd;       /* listening TCP, 127.0.0.1:EG_PROXY_PORT */
  int transparent_fd; /* listening TCP, 127.0.0.1:EG_TRANSPARENT_PORT */
  int dns_fd;         /* UDP, 127.0.0.1:53 */
};

/* Create the namespace and its sockets; the calling thread is back in its
 * own namespace on return, success or not. */
int eg_netns_create (struct eg_netns *ns, sr_error **err);
void eg_netns_close (struct eg_netns *ns);

/* The nftables ruleset (exposed for the unit test). */
const char *eg_netns_ruleset (void);

#endif
