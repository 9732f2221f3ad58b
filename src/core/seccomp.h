/* linux.seccomp through libseccomp.  Compiled in the parent (or taken from
 * the BPF cache under --root), installed by the init as its last setup
 * step. */
#ifndef SANDRUN_SECCOMP_H
#define SANDRUN_SECCOMP_H

#include <stdbool.h>
#include <sys/types.h>
#include <stddef.h>

#include "oci-spec/types.h"
#include "sandrun/error.h"

typedef struct sr_seccomp_prog sr_seccomp_prog;

/* profile NULL: *out = NULL, nothing to do.  cache_dir may be NULL (no
 * cache). */
int sr_seccomp_prepare (const oci_seccomp *profile, const char *cache_dir,
                        sr_seccomp_prog **out, sr_error **err);

/* In the init: install the filter.  *notify_fd gets the user-notification
 * listener fd when the profile uses SCMP_ACT_NOTIFY, else -1.  The filter
 * is loaded as raw BPF with seccomp(2): no_new_privs is NOT set here, so
 * the caller needs CAP_SYS_ADMIN or must have set it itself
 * (process.noNewPrivileges).  A notified syscall blocks until the
 * listener answers, so the init must hand the listener fd over before
 * making any syscall the profile may notify; SCMP_ACT_NOTIFY on "write"
 * (as runc) and "sendmsg" (used to pass the fd) is refused at prepare time
 * so that both stay usable. */
int sr_seccomp_load (const sr_seccomp_prog *prog, int *notify_fd,
                     sr_error **err);

/* Hand the listener fd and the container state to listenerPath
 * (runtime-spec "seccomp" section, SCM_RIGHTS).  process_pid is the
 * process the filter was loaded in (the init, or an exec'd process); 0
 * takes the state's pid. */
int sr_seccomp_send_to_listener (const oci_seccomp *profile, int notify_fd,
                                 pid_t process_pid, const char *state_json,
                                 sr_error **err);
/* Parent: what the init needs to do the same right before execve, once its
 * filter is in, with one sendmsg: a socket connected to listenerPath (an
 * FD message, SR_FD_SECCOMP_LISTENER) and the message to send on it (a
 * DATA message), over the sync socket. */
int sr_seccomp_hand_listener (const oci_seccomp *profile, int sync,
                              pid_t process_pid, const char *state_json,
                              sr_error **err);

/* True when some rule is SCMP_ACT_NOTIFY: the init will produce a listener
 * fd and send it to listenerPath over a socket the parent connected. */
bool sr_seccomp_prog_uses_notify (const sr_seccomp_prog *prog);

void sr_seccomp_prog_free (sr_seccomp_prog *prog);

/* The names the profile parser recognises, for `sandrun features`: the i-th
 * of each table, NULL past the end.  A flag comes with its
 * SECCOMP_FILTER_FLAG_* bit; an architecture of the spec with whether this
 * libseccomp can build filters for it. */
const char *sr_seccomp_action_name (size_t i);
const char *sr_seccomp_operator_name (size_t i);
const char *sr_seccomp_flag_name (size_t i, unsigned int *flag);
const char *sr_seccomp_arch_name (size_t i, bool *usable);

#endif
