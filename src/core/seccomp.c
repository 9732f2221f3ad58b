/* linux.seccomp: compiled to BPF in the parent (or taken from the cache),
 * installed by the init with seccomp(2) right before execve (sr_init_exec). */
#include <errno.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandrun/log.h"
#include "core/seccomp.h"
#include "sandrun/util.h"
#include "seccomp_internal.h"

#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif

void
sr_seccomp_prog_free (sr_seccomp_prog *prog)
{
  if (prog == NULL)
    return;
  free (prog->insns);
  free (prog);
}

static void
sr_seccomp_prog_freep (sr_seccomp_prog **p)
{
  sr_seccomp_prog_free (*p);
}

static bool
profile_uses_notify (const oci_seccomp *p)
{
  size_t i;

  for (i = 0; i < p->syscalls_len; i++)
    if (sr_seccomp_action_is_notify (p->syscalls[i].action)
        && p->syscalls[i].names != NULL && p->syscalls[i].names[0] != NULL)
      return true;
  return false;
}

bool
sr_seccomp_prog_uses_notify (const sr_seccomp_prog *prog)
{
  return prog != NULL && prog->notify;
}

int
sr_seccomp_prepare (const oci_seccomp *profile, const char *cache_dir,
                    sr_seccomp_prog **out, sr_error **err)
{
  __attribute__ ((cleanup (sr_seccomp_prog_freep))) sr_seccomp_prog *prog
      = NULL;
  uint8_t key[SR_SECCOMP_KEY_LEN];

  *out = NULL;
  if (profile == NULL)
    return 0;

  prog = xcalloc (1, sizeof *prog);
  if (sr_seccomp_parse_flags (profile->flags, &prog->flags, err) < 0)
    return -1;
  prog->notify = profile_uses_notify (profile);
  /* The kernel takes this flag only with a listener: say so at create
   * rather than with a bare EINVAL from the init. */
  if ((prog->flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) && !prog->notify)
    return sr_fail (err, 0, "seccomp: the flag SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV needs "
                    "an SCMP_ACT_NOTIFY rule");

  if (cache_dir != NULL)
    {
      sr_seccomp_cache_key (profile, key);
      if (sr_seccomp_cache_load (cache_dir, key, &prog->insns, &prog->len)
          == 0)
        {
          *out = steal_pointer (&prog);
          return 0;
        }
    }

  if (sr_seccomp_compile (profile, &prog->insns, &prog->len, err) < 0)
    return -1;
  if (cache_dir != NULL)
    sr_seccomp_cache_store (cache_dir, key, prog->insns, prog->len);
  *out = steal_pointer (&prog);
  return 0;
}

int
sr_seccomp_load (const sr_seccomp_prog *prog, int *notify_fd, sr_error **err)
{
  struct sock_fprog fprog;
  unsigned int flags;
  long ret;

  if (notify_fd != NULL)
    *notify_fd = -1;
  if (prog == NULL)
    return 0;

  fprog.len = (unsigned short) prog->len;
  fprog.filter = prog->insns;
  flags = prog->flags;
  if (prog->notify)
    {
      flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
      /* TSYNC reports a failing thread by returning its id, which would be
       * indistinguishable from the listener fd. */
      if (flags & SECCOMP_FILTER_FLAG_TSYNC)
        flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
    }

  ret = syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog);
  if (ret < 0)
    return sr_fail (err, errno, "seccomp: load filter");
  if (prog->notify)
    {
      if (notify_fd != NULL)
        *notify_fd = (int) ret;
      else
        close ((int) ret);
    }
  else if (ret > 0)
    return sr_fail (err, 0, "seccomp: cannot synchronise thread %ld", ret);
  return 0;
}
