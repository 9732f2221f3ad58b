/* Internals of the seccomp module, shared by src/core/seccomp*.c and the
 * unit test: the compiled program, the compiler, the BPF cache and the hash
 * that keys it. */
#ifndef SANDRUN_SECCOMP_INTERNAL_H
#define SANDRUN_SECCOMP_INTERNAL_H

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oci-spec/types.h"
#include "sandrun/error.h"

struct sr_seccomp_prog
{
  struct sock_filter *insns;
  size_t len;         /* instructions */
  unsigned int flags; /* SECCOMP_FILTER_FLAG_* from linux.seccomp.flags */
  bool notify;        /* some rule is SCMP_ACT_NOTIFY */
};

/* ---- seccomp_compile.c: profile -> BPF through libseccomp ---- */

/* Every error names the offending value ("seccomp: unknown action
 * \"SCMP_ACT_FOO\"").  *insns is malloc'd. */
int sr_seccomp_compile (const oci_seccomp *profile, struct sock_filter **insns,
                        size_t *len, sr_error **err);

/* Action names and the flag names, without libseccomp (the cache-hit path
 * needs them too). */
bool sr_seccomp_action_is_notify (const char *action);
int sr_seccomp_parse_flags (char *const *flags, unsigned int *out,
                            sr_error **err);

/* ---- seccomp_cache.c ---- */

#define SR_SECCOMP_KEY_LEN 32

/* SHA-256 of the canonical form of everything that shapes the BPF: the
 * default action, architectures and rules, plus the libseccomp version, its
 * API level and the native architecture.  flags and the listener fields do
 * not shape the BPF and are left out. */
void sr_seccomp_cache_key (const oci_seccomp *profile,
                           uint8_t key[SR_SECCOMP_KEY_LEN]);

/* 0 and a malloc'd program on a valid entry; -1 when there is none or it is
 * corrupt (never an error: the caller compiles). */
int sr_seccomp_cache_load (const char *cache_dir,
                           const uint8_t key[SR_SECCOMP_KEY_LEN],
                           struct sock_filter **insns, size_t *len);
/* Best effort: failures are logged at debug level. */
void sr_seccomp_cache_store (const char *cache_dir,
                             const uint8_t key[SR_SECCOMP_KEY_LEN],
                             const struct sock_filter *insns, size_t len);
/* The file name of an entry: lowercase hex of the key. */
void sr_seccomp_cache_name (const uint8_t key[SR_SECCOMP_KEY_LEN],
                            char name[2 * SR_SECCOMP_KEY_LEN + 1]);

/* ---- seccomp_sha256.c: FIPS 180-4 SHA-256 (sandrun/sha256.h) ---- */
#include "sandrun/sha256.h"

#endif
