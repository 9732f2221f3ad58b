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

#include "bundle.h"
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
  long long unrecorded; /* attempts past the gateway's record limit */
  bool incomplete;      /* the gateway's record was cut short or unreadable */
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
/* Start it for the sandbox of bundle `b`: its resolv.conf (in the root's
 * writable top layer, never through a symlink of a --rootfs) and its
 * namespace to join (b->netns, valid while `e` is). */
int sb_egress_start_for (const struct sb_options *o, struct sb_bundle *b,
                         struct sb_egress *e, sr_error **err);
/* End the gateway (its open connections are closed and recorded) and read
 * its record. */
void sb_egress_stop (struct sb_egress *e);
/* End the gateway without reading its record (a session's end). */
void sb_egress_end (struct sb_egress *e);
/* Take the record's lines in `buf` (NUL-terminated; modified) into `e` up
 * to the line that ends them: the summary (`token` NULL) or the mark
 * `token` of a session's execution (docs/sessions.md), whose limits' state
 * `e` takes.  Other marks are skipped.  The offset past that line, or -1
 * when it is not there. */
ssize_t sb_egress_take_record (struct sb_egress *e, char *buf,
                               const char *token);
void sb_egress_clear (struct sb_egress *e);

/* The policy's "network" (none or gateway) and, with the gateway, "egress":
 * the allow-list, the declared hosts and the limits. */
void sb_egress_describe_policy (yajl_gen g, const struct sb_options *o);

/* The first denial's reason, or NULL. */
const char *sb_egress_first_denial (const struct sb_egress *e);
/* The receipt's `network` array (empty without a gateway). */
void sb_egress_describe (yajl_gen g, const struct sb_egress *e);

#endif
