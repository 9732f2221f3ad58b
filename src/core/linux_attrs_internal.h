/* Internals of the linux attributes (linux_attrs.h): one small module per
 * attribute, called by linux_attrs.c at the right step, and the shared
 * parser of "0-3,7" lists.  Shared with the unit tests. */
#ifndef SANDRUN_LINUX_ATTRS_INTERNAL_H
#define SANDRUN_LINUX_ATTRS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "oci-spec/types.h"
#include "sandrun/error.h"

/* ---- idset.c: "0-3,7" lists of CPUs or NUMA nodes ---- */

/* No kernel numbers CPUs (NR_CPUS) or nodes (MAX_NUMNODES) this high: the
 * bound of a list parsed without the host's own limit. */
#define SR_IDSET_MAX 8192

/* A set of ids as the bitmask of unsigned longs that sched_setaffinity and
 * set_mempolicy take. */
struct sr_idset
{
  unsigned long *bits; /* NULL when empty */
  size_t nwords;
  size_t count;       /* ids in the set */
  unsigned long high; /* highest id + 1; 0 when empty */
};

/* Parse a list strictly: decimal ids or LOW-HIGH ranges (LOW <= HIGH)
 * separated by single commas; no spaces, signs or empty items.  "" is the
 * empty set.  Every id must be below `limit`.  `what` names the field and
 * `kind` the ids ("CPU", "node") in errors:
 * "process.execCPUAffinity.final: CPU 9 does not exist (0-1)".  `limit_text`
 * (may be NULL) is shown as the valid range. */
int sr_idset_parse (const char *s, unsigned long limit, const char *limit_text,
                    const char *what, const char *kind, struct sr_idset *out,
                    sr_error **err);
void sr_idset_clear (struct sr_idset *set);
#define _cleanup_idset_ __attribute__ ((cleanup (sr_idset_clear)))
bool sr_idset_has (const struct sr_idset *set, unsigned long id);

/* The host's possible ids from a sysfs list file such as
 * /sys/devices/system/cpu/possible: *limit is the highest + 1 and *text the
 * list itself (malloc'd).  Call in the runtime's mount namespace. */
int sr_idset_host_limit (const char *sysfs_path, unsigned long *limit,
                         char **text, sr_error **err);

/* ---- personality.c ---- */

/* linux.personality: LINUX or LINUX32; any flag is refused (the spec
 * defines none). */
int sr_personality_apply (const oci_personality *p, sr_error **err);

/* ---- scheduler.c ---- */

/* process.scheduler through sched_setattr(2), checked as runc does: nice in
 * -20..19, a priority only for SCHED_FIFO/RR, runtime/deadline/period only
 * for SCHED_DEADLINE. */
int sr_scheduler_apply (const oci_scheduler *s, sr_error **err);

/* ---- iopriority.c ---- */

/* process.ioPriority through ioprio_set(IOPRIO_WHO_PROCESS, 0): class
 * IOPRIO_CLASS_RT, _BE or _IDLE, priority 0..7. */
int sr_io_priority_apply (const oci_io_priority *io, sr_error **err);

/* ---- cpuaffinity.c ---- */

/* process.execCPUAffinity applies to processes joining the container
 * (exec), never to its init (config.md).  The lists are checked against the
 * host's possible CPUs (runtime's mount namespace). */
int sr_exec_cpu_affinity_check (const oci_exec_cpu_affinity *a,
                                sr_error **err);
/* For an exec'd process: `initial` before it joins the cgroup, `final`
 * (when set and not empty) right before execve.  NULL or an unset list:
 * nothing to do. */
int sr_exec_cpu_affinity_initial (const oci_exec_cpu_affinity *a,
                                  sr_error **err);
int sr_exec_cpu_affinity_final (const oci_exec_cpu_affinity *a,
                                sr_error **err);

/* ---- mempolicy.c ---- */

/* linux.memoryPolicy: the names and the nodes against the host's possible
 * nodes (runtime's mount namespace). */
int sr_memory_policy_check (const oci_memory_policy *mp, sr_error **err);
/* set_mempolicy(2) in the init; inherited across fork and execve. */
int sr_memory_policy_apply (const oci_memory_policy *mp, sr_error **err);
/* The recognised names, for `sandrun features`: NULL past the end. */
const char *sr_memory_policy_mode_name (size_t i);
const char *sr_memory_policy_flag_name (size_t i);
/* Whether this kernel takes the i-th mode or flag (a set_mempolicy probe on
 * the calling thread, which gets the default policy back). */
bool sr_memory_policy_mode_works (size_t i);
bool sr_memory_policy_flag_works (size_t i);

/* ---- netdev.c ---- */

/* linux.netDevices: move each host interface into the init's network
 * namespace (renamed to `name` when set), keep its permanent global
 * addresses, and set it up.  The container must have a network namespace
 * of its own.  Parent, before the init goes on. */
int sr_net_devices_move (const oci_config *cfg, pid_t init_pid,
                         sr_error **err);

/* ---- intelrdt.c ---- */

/* linux.intelRdt: refused, with "resctrl is not mounted" where it is not
 * (resctrl groups are not implemented: they would need delete to remove
 * them). */
int sr_intel_rdt_apply (const oci_intel_rdt *rdt, const char *id,
                        pid_t init_pid, sr_error **err);

/* ---- apparmor.c, selinux.c ---- */

/* Parent (host view): a configured label whose LSM is not enabled on the
 * host is an error, as with runc.  An empty label counts as unset (what
 * engines send when the LSM is off). */
int sr_apparmor_check (const oci_process *p, sr_error **err);
int sr_selinux_check (const oci_config *cfg, sr_error **err);
bool sr_apparmor_host_enabled (void);
bool sr_selinux_host_enabled (void);
/* Init: the label the next execve takes. */
int sr_apparmor_exec_profile (const oci_process *p, sr_error **err);
int sr_selinux_exec_label (const oci_process *p, sr_error **err);

#endif
