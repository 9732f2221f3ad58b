/* The container process's identity and limits, applied by the init after
 * pivot_root, in this order: rlimits and oomScoreAdj (while still root),
 * then sr_process_switch_identity (groups, gid, uid, capabilities, umask,
 * cwd), then noNewPrivileges. */
#ifndef SANDRUN_PROCESS_H
#define SANDRUN_PROCESS_H

#include <stdbool.h>

#include "oci-spec/types.h"
#include "sandrun/error.h"

int sr_rlimits_apply (const oci_process *p, sr_error **err);

/* "RLIMIT_NOFILE" -> RLIMIT_NOFILE; -1 when unknown. */
int sr_rlimit_from_name (const char *name);

int sr_oom_score_adj_apply (const oci_process *p, sr_error **err);

/* setgroups (additionalGids), setresgid, setresuid, keeping exactly the
 * configured capability sets across the switch (bounding, effective,
 * permitted, inheritable, ambient); then umask and chdir(cwd) as the new
 * user.  A NULL capabilities object means "no capabilities at all". */
int sr_process_switch_identity (const oci_process *p, sr_error **err);

/* Capabilities alone (also used by exec); "CAP_SYS_ADMIN" -> value, -1 when
 * unknown to this kernel and libcap. */
int sr_cap_from_name (const char *name);
int sr_capabilities_apply (const oci_capabilities *caps, sr_error **err);
/* Drop from the bounding set everything not in `bounding`. */
int sr_capabilities_drop_bounding (const oci_capabilities *caps,
                                   sr_error **err);

int sr_no_new_privs_apply (const oci_process *p, sr_error **err);

/* Resolve args[0] with the PATH of p->env (or a default PATH) in the current
 * root, as execvp would; malloc'd absolute path. */
char *sr_process_find_executable (const oci_process *p, sr_error **err);

/* Mark every fd >= first as close-on-exec (close_range where available). */
int sr_fds_cloexec_from (int first, sr_error **err);

#endif
