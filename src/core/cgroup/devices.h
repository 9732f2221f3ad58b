/* The device cgroup: one rule list, written as v1 devices.allow/deny or
 * compiled to a cgroup2 eBPF program. */
#ifndef SANDRUN_CGROUP_DEVICES_H
#define SANDRUN_CGROUP_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oci-spec/types.h"
#include "sandrun/error.h"

#define SR_DEV_MKNOD 1u /* the BPF_DEVCG_ACC_* values */
#define SR_DEV_READ 2u
#define SR_DEV_WRITE 4u
#define SR_DEV_ALL (SR_DEV_MKNOD | SR_DEV_READ | SR_DEV_WRITE)

struct sr_cg_dev_rule
{
  bool allow;
  char type;      /* 'a', 'c' or 'b' */
  int64_t major;  /* -1: any */
  int64_t minor;  /* -1: any */
  unsigned access; /* SR_DEV_* */
};

/* The effective rules, in order (a later match wins): deny everything, the
 * config's rules, then the devices every container gets (/dev/null, zero,
 * full, random, urandom, tty, console, ptmx, pts/N; mknod of any node).
 * `devs` (linux.devices) are only checked: they get no rule. */
int sr_cg_device_rules (const oci_resources *res, const oci_device *devs,
                        size_t ndevs, struct sr_cg_dev_rule **out, size_t *n,
                        sr_error **err);

/* SR_DEV_* as "rwm" (a subset, in that order), as devices.allow and
 * systemd's DeviceAllow= write it. */
void sr_cg_dev_access_str (unsigned access, char out[4]);

int sr_cg_v1_devices (int dirfd, const struct sr_cg_dev_rule *rules,
                      size_t n, sr_error **err);

/* Attach a BPF_PROG_TYPE_CGROUP_DEVICE program for `rules` (default deny,
 * last match wins) to a cgroup2 directory, replacing any program attached
 * there before.  The instructions alone, for tests: */
int sr_cg_bpf_devices (int dirfd, const struct sr_cg_dev_rule *rules,
                       size_t n, sr_error **err);
size_t sr_cg_bpf_compile (const struct sr_cg_dev_rule *rules, size_t n,
                          void **insns);

#endif
