/* The egress policy of a sandbox: what --allow-host and --add-host say, and the checks
 * the gateway makes with it.  Pure functions, no system calls: shared by the
 * gateway (sandrun-egress) and by `sandrun sandbox`, which validates the
 * options before anything starts. */
#ifndef SANDRUN_SANDBOX_EGRESS_POLICY_H
#define SANDRUN_SANDBOX_EGRESS_POLICY_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "sandrun/error.h"

#define EG_NAME_MAX 253

/* An address of either family, in network byte order. */
struct eg_addr
{
  int family; /* AF_INET or AF_INET6 */
  uint8_t bytes[16];
};

/* One --allow-host: a name, a wildcard (*.example.com: any name below, not
 * example.com itself) or an address/CIDR; port 0 means the defaults (80 and
 * 443). */
struct eg_rule
{
  char *name;    /* lower case, no trailing dot; NULL for a CIDR */
  bool wildcard; /* name holds the suffix after "*." */
  struct eg_addr net;
  unsigned prefix; /* CIDR prefix length */
  uint16_t port;
};

/* One --add-host NAME:ADDR. */
struct eg_host
{
  char *name;
  struct eg_addr addr;
};

struct eg_policy
{
  struct eg_rule *rules;
  size_t n_rules;
  struct eg_host *hosts;
  size_t n_hosts;
  /* The host's own addresses (filled by the gateway at start). */
  struct eg_addr *own;
  size_t n_own;
};

/* Parse "PATTERN[:PORT]" / "NAME:ADDR" and append to the policy; the error
 * names the option and says what was expected. */
int eg_policy_add_rule (struct eg_policy *p, const char *arg, sr_error **err);
int eg_policy_add_host (struct eg_policy *p, const char *arg, sr_error **err);
void eg_policy_clear (struct eg_policy *p);

/* Normalise a host name as received from the sandbox (Host:, SNI, CONNECT,
 * a DNS question): lower case, one trailing dot dropped; false when it is
 * not a plausible DNS name (empty, too long, bad characters). */
bool eg_name_normalise (const char *in, size_t len, char out[EG_NAME_MAX + 1]);

/* Is `name` (normalised) on the allow-list for `port` (0: any port)? */
bool eg_policy_name_allowed (const struct eg_policy *p, const char *name,
                             uint16_t port);
/* Is this address covered by an allowed CIDR for `port` (0: any port)? */
bool eg_policy_addr_allowed (const struct eg_policy *p,
                             const struct eg_addr *a, uint16_t port);
/* The --add-host address of a name, or NULL. */
const struct eg_addr *eg_policy_host (const struct eg_policy *p,
                                      const char *name);

/* Why an address must not be reached, in words ("a link-local address"),
 * or NULL when it may be.  `declared`: the address comes from --add-host
 * (an operator's internal API may sit in a private range; loopback,
 * link-local and the host's own addresses stay forbidden).  An allowed CIDR
 * that covers the address lifts every restriction. */
const char *eg_policy_addr_forbidden (const struct eg_policy *p,
                                      const struct eg_addr *a, uint16_t port,
                                      bool declared);

/* Text form of an address (no port). */
void eg_addr_str (const struct eg_addr *a, char *buf, size_t len);
bool eg_addr_parse (const char *s, struct eg_addr *a);
void eg_addr_from_sockaddr (const struct sockaddr *sa, struct eg_addr *a);
bool eg_addr_eq (const struct eg_addr *a, const struct eg_addr *b);

#endif
