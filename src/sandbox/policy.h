/* Policy: the options of a sandbox turned into the OCI config the core runs,
 * and described (limits, mounts, network, seccomp) for the receipt.  The
 * one place where what a sandbox may do is decided. */
#ifndef SANDRUN_SANDBOX_POLICY_H
#define SANDRUN_SANDBOX_POLICY_H

#include <yajl/yajl_gen.h>

#include "oci-spec/types.h"
#include "bundle.h"
#include "options.h"
#include "sandrun/error.h"

/* The name of the seccomp profile (contrib/seccomp/default.json, built in). */
#define SB_SECCOMP_PROFILE "sandrun-untrusted-v1"
/* /dev/shm's size: POSIX semaphores and shared memory, not storage. */
#define SB_SHM_SIZE (16ULL << 20)

/* The config for `o` run in bundle `b`; free with oci_config_free. */
oci_config *sb_policy_config (const struct sb_options *o,
                              const struct sb_bundle *b, sr_error **err);

/* The memory cgroup limit: the process's own --memory plus the tmpfs it may
 * fill (their pages are charged to the sandbox's cgroup). */
uint64_t sb_policy_cgroup_memory (const struct sb_options *o,
                                  const struct sb_bundle *b);

/* The "policy" object of the receipt. */
void sb_policy_describe (yajl_gen gen, const struct sb_options *o,
                         const struct sb_bundle *b);

#endif
