/* The container process's identity and limits, applied by the init after
 * pivot_root, in this order: rlimits and oomScoreAdj (while still root),
 * then sr_process_switch_identity (groups, gid, uid, capabilities, umask,
 * cwd), then noNewPrivileges. */
#ifndef SANDRUN_PROCESS_H
#define SANDRUN_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oci-spec/types.h"
#include "sandrun/error.h"

/* The capability sets a process ends with when it keeps CAP_SYS_ADMIN a
 * little longer, to load its seccomp filter without no_new_privs: the
 * filter goes in as late as possible, and the sets are applied right after
 * (sr_capabilities_apply_late).  pending: CAP_SYS_ADMIN was kept. */
struct sr_caps_late
{
  bool pending;
  uint64_t effective;
  uint64_t permitted;
  uint64_t inheritable;
};

int sr_rlimits_apply (const oci_process *p, sr_error **err);

/* "RLIMIT_NOFILE" -> RLIMIT_NOFILE; -1 when unknown. */
int sr_rlimit_from_name (const char *name);

int sr_oom_score_adj_apply (const oci_process *p, sr_error **err);

/* setgroups (additionalGids), setresgid, setresuid, keeping exactly the
 * configured capability sets across the switch (bounding, effective,
 * permitted, inheritable, ambient); then umask (0022 when unset).
 * A NULL capabilities object means "no capabilities at all".
 * cwd (absolute) is entered as root first, as runc does, and again as the
 * new user only when root was refused (EACCES/EPERM); a cwd outside the
 * root (CVE-2024-21626) is an error.  Also gives the new user ownership of
 * stdio that is not /dev/null or a regular file (runc's
 * fixStdioPermissions), so the process can reopen its tty or /dev/stdout.
 * setgroups is skipped in a user namespace where it is denied and no
 * additionalGids are configured.  With `late`, CAP_SYS_ADMIN stays
 * effective and permitted for a seccomp filter loaded later; *late says
 * what to apply after it. */
int sr_process_switch_identity (const oci_process *p, struct sr_caps_late *late,
                                sr_error **err);

/* Capabilities alone (also used by exec); "CAP_SYS_ADMIN" -> value, -1 when
 * unknown to this kernel.  In a config, a well-formed name the kernel does
 * not know ("CAP_" + [A-Z0-9_]) is skipped with a warning, as runc does; a
 * malformed one is an error.  sr_capabilities_apply sets effective,
 * permitted and inheritable exactly (capset) and the ambient set within the
 * config (clear, then raise each; one that is not both permitted and
 * inheritable is skipped, as runc does). */
int sr_cap_from_name (const char *name);
/* The i-th capability name this runtime knows (capability number i), NULL
 * past the end (for `sandrun features`). */
const char *sr_cap_name_at (size_t i);
int sr_capabilities_apply (const oci_capabilities *caps, struct sr_caps_late *late,
                           sr_error **err);
/* The second half of sr_capabilities_apply with a `late`: one capset, no
 * allocation, no lookup, so that it works under any seccomp filter that
 * allows capset.  Nothing to do when nothing was kept. */
int sr_capabilities_apply_late (const struct sr_caps_late *late, sr_error **err);
/* Drop from the bounding set everything not in `bounding`. */
int sr_capabilities_drop_bounding (const oci_capabilities *caps,
                                   sr_error **err);

int sr_no_new_privs_apply (const oci_process *p, sr_error **err);

/* Resolve args[0] with the PATH of p->env (or a default PATH) in the current
 * root, as execvp would (skipping what is not an executable regular file);
 * malloc'd path.  An args[0] with a '/' is returned as is once checked
 * ("exec \"/bin/nope\": No such file or directory").  Not found in PATH:
 * ENOENT, "exec \"foo\": executable file not found in $PATH". */
/* "exec \"PATH\": no such file or directory": Docker maps a failed start to
 * exit status 127 or 126 by looking for Go's lowercase errno texts. */
int sr_fail_exec (sr_error **err, int errnum, const char *path);

char *sr_process_find_executable (const oci_process *p, sr_error **err);

/* The environment for execve: a copy of p->env plus, when it has no HOME,
 * HOME from the container's /etc/passwd entry of user.uid ("/" when there
 * is none), as runc and crun do.  Call after pivot_root.  strv_free it. */
char **sr_process_env (const oci_process *p);

/* Mark every fd >= first as close-on-exec (close_range where available). */
int sr_fds_cloexec_from (int first, sr_error **err);

#endif
