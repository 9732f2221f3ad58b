/* The per-process and per-container Linux attributes beyond namespaces,
 * mounts and credentials (config-linux.md, config.md): personality,
 * scheduler, ioPriority, execCPUAffinity, memoryPolicy, netDevices, intelRdt,
 * AppArmor and SELinux labels.  Each is applied or refused with a clear
 * error; none is silently ignored. */
#ifndef SANDRUN_LINUX_ATTRS_H
#define SANDRUN_LINUX_ATTRS_H

#include <sys/types.h>

#include "oci-spec/types.h"
#include "sandrun/error.h"

/* Parent, after the init is in its cgroup and before it continues (host
 * view: the runtime's mount and network namespaces):
 *   - checks that need the host: the AppArmor/SELinux labels against the
 *     LSMs the host has, execCPUAffinity and memoryPolicy lists against the
 *     host's possible CPUs and nodes;
 *   - intelRdt (refused: resctrl groups are not implemented);
 *   - netDevices, moved into the init's network namespace (last: the only
 *     step with an effect outside the container). */
int sr_linux_attrs_parent (const oci_config *cfg, const char *id,
                           pid_t init_pid, sr_error **err);

/* Init, after pivot_root and rlimits, still as root, before the identity
 * switch: personality, ioPriority, memoryPolicy, scheduler (last, so that
 * SCHED_IDLE or a deadline budget does not slow the setup).
 * execCPUAffinity is not applied to the init (config.md: "not applicable to
 * the container's init process"); see sr_exec_cpu_affinity_* for exec. */
int sr_linux_attrs_process (const oci_config *cfg, sr_error **err);

/* Init, last before execve-time (after the identity switch, before
 * seccomp when noNewPrivileges): the AppArmor profile and SELinux label the
 * process gets at execve. */
int sr_linux_attrs_exec_labels (const oci_process *p, sr_error **err);

/* Every CPU the cgroup allows, for the init and an exec'd process whose
 * execCPUAffinity `a` (may be NULL) sets no initial list: a runtime started
 * pinned (taskset, systemd's CPUAffinity=, a pinned shim) must not pin the
 * container (as runc 1.2).  Best effort. */
void sr_cpu_affinity_reset (const oci_exec_cpu_affinity *a);

/* linux.mountLabel (selinux.c), as runc applies it.  sr_selinux_check, in
 * the parent, has refused a label with a double quote or a line break and
 * warned that it is ignored where SELinux is not enabled. */

/* The label the container's mounts get: linux.mountLabel when it is set
 * and SELinux is enabled on the host, else NULL.  Call before the pivot. */
const char *sr_selinux_mount_label (const oci_config *cfg);

/* The data options of a new `fstype` filesystem, labelled: a copy of
 * `data` (NULL is empty) with context="LABEL" appended, quoted as mount(2)
 * wants it (the label holds commas; mount.c hands it to fsconfig
 * unquoted).  NULL, and `data` stays as is, when `label` is NULL or "",
 * unusable, or the filesystem takes no context= (proc, sysfs, cgroup,
 * cgroup2, mqueue, bind). */
char **sr_selinux_mount_data (char *const *data, const char *fstype,
                              const char *label);

/* After a new `fstype` filesystem is mounted (`mntfd`: an O_PATH fd of its
 * root): mqueue's root gets the label as its security.selinux attribute,
 * as runc does; nothing for other types or without a label. */
int sr_selinux_label_mount_root (int mntfd, const char *fstype,
                                 const char *label, sr_error **err);

#endif
