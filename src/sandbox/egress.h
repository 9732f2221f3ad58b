/* The sandbox's side of the egress gateway (docs/egress.md): with
 * --allow-host, sandrun starts sandrun-egress, a separate executable, which
 * makes the sandbox's network namespace and serves it; the sandbox joins
 * that namespace, gets the proxy variables and a resolv.conf naming the
 * DNS stub, and after the run the gateway's record of every connection
 * attempt becomes the receipt's `network` list.  Without --allow-host
 * nothing here runs and the sandbox has its own loopback-only namespace. */
#ifndef SANDRUN_SANDBOX_EGRESS_H
#define SANDRUN_SANDBOX_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <yajl/yajl_gen.h>

#include "options.h"
#include "sandrun/error.h"

/* The environment the sandboxed process gets with the gateway on. */
extern const char *const sb_egress_env[];
/* Write the sandbox's /etc/resolv.conf (the DNS stub) under `rootfs`. */
int sb_egress_write_resolv_conf (const char *rootfs, sr_error **err);

/* One connection attempt, as the gateway recorded it. */
struct sb_egress_entry
{
  char *time, *protocol, *host, *address, *decision, *reason;
  long long port, bytes_out, bytes_in, duration_ms;
};

struct sb_egress
{
  pid_t pid;
  int control_fd;
  int log_fd;
  char *netns; /* /proc/PID/fd/N: the namespace the sandbox joins */
  /* after sb_egress_stop */
  struct sb_egress_entry *entries;
  size_t n_entries;
  size_t denied;
  bool bytes_limit_hit, connections_limit_hit;
  bool incomplete; /* the gateway's record was cut short or unreadable */
};

#define SB_EGRESS_INIT                                                        \
  {                                                                           \
    .pid = -1, .control_fd = -1, .log_fd = -1                                 \
  }

/* Is the gateway wanted (any --allow-host)? */
bool sb_egress_wanted (const struct sb_options *o);
/* Check --allow-host and --add-host values before anything starts. */
int sb_egress_check (const struct sb_options *o, sr_error **err);
/* Start the gateway and wait until its namespace is ready. */
int sb_egress_start (const struct sb_options *o, struct sb_egress *e,
                     sr_error **err);
/* End the gateway (its open connections are closed and recorded) and read
 * its record. */
void sb_egress_stop (struct sb_egress *e);
void sb_egress_clear (struct sb_egress *e);

/* The policy's "network" (none or gateway) and, with the gateway, "egress":
 * the allow-list, the declared hosts and the limits. */
void sb_egress_describe_policy (yajl_gen g, const struct sb_options *o);

/* The first denial's reason, or NULL. */
const char *sb_egress_first_denial (const struct sb_egress *e);
/* The receipt's `network` array (empty without a gateway). */
void sb_egress_describe (yajl_gen g, const struct sb_egress *e);

#endif
