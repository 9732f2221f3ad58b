/* process.capabilities: the five capability sets, with raw capset(2) and
 * prctl(2) so that every set is exactly what the config lists and nothing
 * more.  In particular the inheritable set is never widened to the bounding
 * set (CVE-2022-29162): a capability the config does not list in
 * `inheritable` must not survive an execve of a file with inheritable file
 * capabilities. */
#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandrun/log.h"
#include "core/process.h"
#include "sandrun/util.h"

/* Indexed by capability number (include/uapi/linux/capability.h). */
static const char *const cap_names[] = {
  "CAP_CHOWN",
  "CAP_DAC_OVERRIDE",
  "CAP_DAC_READ_SEARCH",
  "CAP_FOWNER",
  "CAP_FSETID",
  "CAP_KILL",
  "CAP_SETGID",
  "CAP_SETUID",
  "CAP_SETPCAP",
  "CAP_LINUX_IMMUTABLE",
  "CAP_NET_BIND_SERVICE",
  "CAP_NET_BROADCAST",
  "CAP_NET_ADMIN",
  "CAP_NET_RAW",
  "CAP_IPC_LOCK",
  "CAP_IPC_OWNER",
  "CAP_SYS_MODULE",
  "CAP_SYS_RAWIO",
  "CAP_SYS_CHROOT",
  "CAP_SYS_PTRACE",
  "CAP_SYS_PACCT",
  "CAP_SYS_ADMIN",
  "CAP_SYS_BOOT",
  "CAP_SYS_NICE",
  "CAP_SYS_RESOURCE",
  "CAP_SYS_TIME",
  "CAP_SYS_TTY_CONFIG",
  "CAP_MKNOD",
  "CAP_LEASE",
  "CAP_AUDIT_WRITE",
  "CAP_AUDIT_CONTROL",
  "CAP_SETFCAP",
  "CAP_MAC_OVERRIDE",
  "CAP_MAC_ADMIN",
  "CAP_SYSLOG",
  "CAP_WAKE_ALARM",
  "CAP_BLOCK_SUSPEND",
  "CAP_AUDIT_READ",
  "CAP_PERFMON",
  "CAP_BPF",
  "CAP_CHECKPOINT_RESTORE",
};

/* The five sets as bit masks (bit N = capability N). */
struct capsets
{
  uint64_t bounding;
  uint64_t effective;
  uint64_t permitted;
  uint64_t inheritable;
  uint64_t ambient;
};

#define CAP_BIT(c) (UINT64_C (1) << (c))

/* The highest capability the running kernel knows: PR_CAPBSET_READ answers
 * EINVAL past it.  Asking the kernel needs no /proc. */
static int
kernel_last_cap (void)
{
  static int last = -1;

  /* A binary search: six calls, not one per capability. */
  if (last < 0)
    {
      int lo = 0, hi = 63; /* capability 0 always exists */
      while (lo < hi)
        {
          int mid = (lo + hi + 1) / 2;
          if (prctl (PR_CAPBSET_READ, (unsigned long) mid, 0, 0, 0) >= 0)
            lo = mid;
          else
            hi = mid - 1;
        }
      last = lo;
    }
  return last;
}

const char *
sr_cap_name_at (size_t i)
{
  return i < ARRAY_SIZE (cap_names) ? cap_names[i] : NULL;
}

int
sr_cap_from_name (const char *name)
{
  if (name == NULL)
    return -1;
  for (size_t i = 0; i < ARRAY_SIZE (cap_names); i++)
    if (strcmp (cap_names[i], name) == 0)
      return (int) i <= kernel_last_cap () ? (int) i : -1;
  return -1;
}

/* "CAP_" followed by upper-case letters, digits and underscores: anything
 * else is a typo, not a capability of a newer kernel. */
static bool
cap_name_well_formed (const char *name)
{
  if (!str_has_prefix (name, "CAP_") || name[4] == '\0')
    return false;
  for (const char *s = name + 4; *s; s++)
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
      return false;
  return true;
}

/* Names unknown to this kernel are skipped with one warning (as runc does:
 * a config written for a newer kernel still runs); malformed names fail. */
static int
caps_mask (char **names, const char *set, uint64_t *out, char ***unknown,
           sr_error **err)
{
  *out = 0;
  for (size_t i = 0; names != NULL && names[i] != NULL; i++)
    {
      int c;

      if (!cap_name_well_formed (names[i]))
        return sr_fail (err, EINVAL,
                        "capabilities.%s: \"%s\" is not a capability name", set,
                        names[i]);
      c = sr_cap_from_name (names[i]);
      if (c >= 0)
        *out |= CAP_BIT (c);
      else
        {
          bool seen = false;
          for (size_t j = 0; *unknown != NULL && (*unknown)[j]; j++)
            seen = seen || strcmp ((*unknown)[j], names[i]) == 0;
          if (!seen)
            strv_append (unknown, names[i]);
        }
    }
  return 0;
}

static void
warn_unknown_caps (char **unknown)
{
  _cleanup_free_ char *list = NULL;

  if (unknown == NULL)
    return;
  for (size_t i = 0; unknown[i]; i++)
    {
      char *l
          = xasprintf ("%s%s%s", list ? list : "", list ? " " : "", unknown[i]);
      free (list);
      list = l;
    }
  sr_warn ("ignoring capabilities unknown to this kernel: %s", list);
}

/* `warn`: report unknown names (once per process setup, not per call). */
static int
caps_resolve (const oci_capabilities *caps, struct capsets *s, bool warn,
              sr_error **err)
{
  _cleanup_strv_ char **unknown = NULL;

  memset (s, 0, sizeof *s);
  if (caps == NULL)
    return 0;
  const struct
  {
    char **names;
    const char *set;
    uint64_t *out;
  } sets[] = {
    { caps->bounding, "bounding", &s->bounding },
    { caps->effective, "effective", &s->effective },
    { caps->permitted, "permitted", &s->permitted },
    { caps->inheritable, "inheritable", &s->inheritable },
    { caps->ambient, "ambient", &s->ambient },
  };

  for (size_t i = 0; i < ARRAY_SIZE (sets); i++)
    if (caps_mask (sets[i].names, sets[i].set, sets[i].out, &unknown, err) < 0)
      return -1;
  if (warn)
    warn_unknown_caps (unknown);
  return 0;
}

static const char *
cap_name (int c)
{
  return (size_t) c < ARRAY_SIZE (cap_names) ? cap_names[c] : "CAP_?";
}

/* The first capability of `sub` missing from `super`, or -1. */
static int
first_missing (uint64_t sub, uint64_t super)
{
  uint64_t extra = sub & ~super;
  return extra ? __builtin_ctzll (extra) : -1;
}

int
sr_capabilities_drop_bounding (const oci_capabilities *caps, sr_error **err)
{
  struct capsets s;
  int last = kernel_last_cap ();

  if (caps_resolve (caps, &s, false, err) < 0)
    return -1;
  for (int c = 0; c <= last; c++)
    {
      if (s.bounding & CAP_BIT (c))
        continue;
      /* Without CAP_SETPCAP, a capability already gone is no error. */
      if (prctl (PR_CAPBSET_DROP, (unsigned long) c, 0, 0, 0) < 0
          && prctl (PR_CAPBSET_READ, (unsigned long) c, 0, 0, 0) != 0)
        return sr_fail (err, errno, "drop %s from the bounding set",
                        cap_name (c));
    }
  return 0;
}

static int
caps_check (struct capsets *s, sr_error **err)
{
  int c;

  if ((c = first_missing (s->effective, s->permitted)) >= 0)
    return sr_fail (err, EINVAL,
                    "capabilities: %s is effective but not permitted",
                    cap_name (c));
  /* The kernel refuses to raise an ambient capability that is not both
   * permitted and inheritable.  runc's own default spec lists ambient
   * capabilities without inheritable ones, and runc warns and goes on:
   * so do we, and the ambient set stays within the configuration. */
  while ((c = first_missing (s->ambient, s->permitted & s->inheritable)) >= 0)
    {
      sr_debug ("capabilities: ambient %s is not both permitted and "
                "inheritable: not raised",
                cap_name (c));
      s->ambient &= ~CAP_BIT (c);
    }
  return 0;
}

static int
caps_set (const struct capsets *s, sr_error **err)
{
  struct __user_cap_header_struct hdr = {
    .version = _LINUX_CAPABILITY_VERSION_3,
    .pid = 0,
  };
  struct __user_cap_data_struct data[2];

  for (int i = 0; i < 2; i++)
    {
      data[i].effective = (uint32_t) (s->effective >> (32 * i));
      data[i].permitted = (uint32_t) (s->permitted >> (32 * i));
      data[i].inheritable = (uint32_t) (s->inheritable >> (32 * i));
    }
  if (syscall (SYS_capset, &hdr, data) < 0)
    return sr_fail (err, errno,
                    "capset (effective 0x%" PRIx64 ", permitted 0x%" PRIx64
                    ", inheritable 0x%" PRIx64 ")",
                    s->effective, s->permitted, s->inheritable);
  return 0;
}

static int
ambient_set (uint64_t ambient, sr_error **err)
{
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
    {
      /* A kernel without ambient capabilities (< 4.3) has none to clear. */
      if (errno == EINVAL && ambient == 0)
        return 0;
      return sr_fail (err, errno, "clear the ambient capabilities");
    }
  for (int c = 0; c < 64; c++)
    if ((ambient & CAP_BIT (c))
        && prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, (unsigned long) c, 0, 0)
               < 0)
      return sr_fail (err, errno, "raise ambient %s", cap_name (c));
  return 0;
}

int
sr_capabilities_apply (const oci_capabilities *caps, struct sr_caps_late *late, sr_error **err)
{
  struct capsets s;

  if (late != NULL)
    late->pending = false;
  if (caps_resolve (caps, &s, true, err) < 0 || caps_check (&s, err) < 0)
    return -1;
  /* Loading a seccomp filter without no_new_privs needs CAP_SYS_ADMIN: keep
   * it effective, in no set an execve could pass on, until the filter is
   * in; the exact sets, resolved now, are one capset away. */
  if (late != NULL && !(s.effective & CAP_BIT (CAP_SYS_ADMIN)))
    {
      late->pending = true;
      late->effective = s.effective;
      late->permitted = s.permitted;
      late->inheritable = s.inheritable;
      s.effective |= CAP_BIT (CAP_SYS_ADMIN);
      s.permitted |= CAP_BIT (CAP_SYS_ADMIN);
    }
  if (caps_set (&s, err) < 0 || ambient_set (s.ambient, err) < 0)
    return sr_wrap (err, "apply capabilities");
  return 0;
}

int
sr_capabilities_apply_late (const struct sr_caps_late *late, sr_error **err)
{
  struct capsets s = { 0 };

  if (late == NULL || !late->pending)
    return 0;
  s.effective = late->effective;
  s.permitted = late->permitted;
  s.inheritable = late->inheritable;
  if (caps_set (&s, err) < 0)
    return sr_wrap (err, "drop CAP_SYS_ADMIN after loading the seccomp filter");
  return 0;
}
