/* The sandbox's network namespace (see netns.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <nftables/libnftables.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/netlink.h"
#include "egress/netns.h"
#include "sandrun/util.h"

#define STR_(x) #x
#define STR(x) STR_ (x)

/* nat: loopback stays loopback (the sandbox's own servers); every other TCP
 * connection goes to the transparent port, every DNS query to the stub.
 * filter: only local destinations (after that redirection) leave; TCP
 * elsewhere (IPv6) is reset, the rest (UDP, ICMP, raw) rejected. */
static const char ruleset[]
    = "table inet sandrun {\n"
      "  chain nat_out {\n"
      "    type nat hook output priority -100; policy accept;\n"
      "    ip daddr 127.0.0.0/8 return\n"
      "    ip protocol tcp redirect to :" STR (
          EG_TRANSPARENT_PORT) "\n"
                               "    ip protocol udp udp dport 53 redirect to "
                               ":53\n"
                               "  }\n"
                               "  chain filter_out {\n"
                               "    type filter hook output priority 0; "
                               "policy drop;\n"
                               "    fib daddr type local accept\n"
                               "    meta l4proto tcp reject with tcp reset\n"
                               "    reject\n"
                               "  }\n"
                               "}\n";

const char *
eg_netns_ruleset (void)
{
  return ruleset;
}

static int
load_rules (sr_error **err)
{
  struct nft_ctx *nft = nft_ctx_new (NFT_CTX_DEFAULT);
  if (nft == NULL)
    return sr_fail (err, ENOMEM, "nftables context");
  nft_ctx_buffer_error (nft);
  nft_ctx_buffer_output (nft);
  int r = nft_run_cmd_from_buffer (nft, ruleset);
  if (r != 0)
    {
      const char *why = nft_ctx_get_error_buffer (nft);
      _cleanup_free_ char *msg = xstrdup (why ? why : "");
      msg[strcspn (msg, "\n")] = '\0';
      nft_ctx_free (nft);
      return sr_fail (err, 0, "load the nftables rules: %s",
                      msg[0] ? msg : "refused");
    }
  nft_ctx_free (nft);
  return 0;
}

static int
loopback_up (sr_error **err)
{
  _cleanup_close_ int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct ifreq ifr = { 0 };
  strcpy (ifr.ifr_name, "lo");
  if (fd < 0 || ioctl (fd, SIOCGIFFLAGS, &ifr) < 0)
    return sr_fail (err, errno, "read the flags of lo");
  ifr.ifr_flags |= IFF_UP;
  if (ioctl (fd, SIOCSIFFLAGS, &ifr) < 0)
    return sr_fail (err, errno, "set lo up");
  return 0;
}

/* EG_LOCAL_ADDR on lo and a default route through lo from it: without a
 * route a connect() to an outside address fails before netfilter sees it. */
static int
local_route (sr_error **err)
{
  _cleanup_close_ int nl = sr_nl_open (err);
  if (nl < 0)
    return -1;
  unsigned idx = if_nametoindex ("lo");
  struct in_addr local;
  inet_pton (AF_INET, EG_LOCAL_ADDR, &local);

  struct sr_nl_req r;
  sr_nl_req_init (&r, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK);
  struct ifaddrmsg *ifa = sr_nl_req_put (&r, sizeof *ifa);
  ifa->ifa_family = AF_INET;
  ifa->ifa_prefixlen = 32;
  ifa->ifa_index = idx;
  sr_nl_req_attr (&r, IFA_LOCAL, &local, sizeof local);
  sr_nl_req_attr (&r, IFA_ADDRESS, &local, sizeof local);
  if (sr_nl_call (nl, &r, NULL, NULL, err) < 0)
    return sr_wrap (err, "add %s to lo", EG_LOCAL_ADDR);

  sr_nl_req_init (&r, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK);
  struct rtmsg *rt = sr_nl_req_put (&r, sizeof *rt);
  rt->rtm_family = AF_INET;
  rt->rtm_table = RT_TABLE_MAIN;
  rt->rtm_protocol = RTPROT_STATIC;
  rt->rtm_scope = RT_SCOPE_LINK;
  rt->rtm_type = RTN_UNICAST;
  sr_nl_req_attr_u32 (&r, RTA_OIF, idx);
  sr_nl_req_attr (&r, RTA_PREFSRC, &local, sizeof local);
  if (sr_nl_call (nl, &r, NULL, NULL, err) < 0)
    return sr_wrap (err, "add the default route through lo");
  return 0;
}

static int
listen_on (int type, uint16_t port, sr_error **err)
{
  _cleanup_close_ int fd
      = socket (AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons (port) };
  sa.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  int one = 1;
  if (fd < 0 || setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0
      || bind (fd, (struct sockaddr *) &sa, sizeof sa) < 0
      || (type == SOCK_STREAM && listen (fd, 128) < 0))
    return sr_fail (err, errno, "listen on 127.0.0.1:%u", port);
  return steal_fd (&fd);
}

static int
populate (struct eg_netns *ns, sr_error **err)
{
  if (loopback_up (err) < 0 || local_route (err) < 0 || load_rules (err) < 0)
    return -1;
  ns->proxy_fd = listen_on (SOCK_STREAM, EG_PROXY_PORT, err);
  if (ns->proxy_fd < 0)
    return -1;
  ns->transparent_fd = listen_on (SOCK_STREAM, EG_TRANSPARENT_PORT, err);
  if (ns->transparent_fd < 0)
    return -1;
  ns->dns_fd = listen_on (SOCK_DGRAM, EG_DNS_PORT, err);
  if (ns->dns_fd < 0)
    return -1;
  ns->nsfd = open ("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (ns->nsfd < 0)
    return sr_fail (err, errno, "open the new network namespace");
  return 0;
}

void
eg_netns_close (struct eg_netns *ns)
{
  sr_close (ns->nsfd);
  sr_close (ns->proxy_fd);
  sr_close (ns->transparent_fd);
  sr_close (ns->dns_fd);
  ns->nsfd = ns->proxy_fd = ns->transparent_fd = ns->dns_fd = -1;
}

int
eg_netns_create (struct eg_netns *ns, sr_error **err)
{
  ns->nsfd = ns->proxy_fd = ns->transparent_fd = ns->dns_fd = -1;
  _cleanup_close_ int host
      = open ("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (host < 0)
    return sr_fail (err, errno, "open the host's network namespace");
  if (unshare (CLONE_NEWNET) < 0)
    return sr_fail (err, errno, "create a network namespace");
  int r = populate (ns, err);
  if (setns (host, CLONE_NEWNET) < 0)
    {
      /* cannot happen with CAP_SYS_ADMIN; never serve from the wrong side */
      sr_error_free (err ? *err : NULL);
      if (err)
        *err = NULL;
      r = sr_fail (err, errno, "return to the host's network namespace");
    }
  if (r < 0)
    eg_netns_close (ns);
  return r;
}
