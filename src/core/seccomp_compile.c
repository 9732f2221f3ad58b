/* linux.seccomp -> classic BPF through libseccomp, following runc's
 * semantics: SCMP_ACT_KILL is KILL_THREAD, ERRNO and TRACE default to EPERM,
 * unknown syscall names are skipped, a rule with the default action is
 * dropped, and the args of one syscall entry are ANDed in one rule unless
 * two of them test the same argument, in which case each arg becomes its
 * own rule (ORed).  The program is exported as raw BPF so the init loads it
 * with seccomp(2) and the parent can cache it. */
#include <ctype.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandrun/log.h"
#include "core/seccomp.h"
#include "sandrun/util.h"
#include "seccomp_internal.h"

#define SYSCALL_MAX_ARGS 6

static void
seccomp_releasep (scmp_filter_ctx *ctx)
{
  if (*ctx != NULL)
    seccomp_release (*ctx);
}
#define _cleanup_seccomp_ __attribute__ ((cleanup (seccomp_releasep)))

/* ---- names ---- */

bool
sr_seccomp_action_is_notify (const char *action)
{
  return str_eq (action, "SCMP_ACT_NOTIFY");
}

static const struct
{
  const char *name;
  unsigned int flag;
} flag_names[] = {
  { "SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC },
  { "SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG },
  { "SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW },
  { "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
    SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV },
};

const char *
sr_seccomp_flag_name (size_t i, unsigned int *flag)
{
  if (i >= ARRAY_SIZE (flag_names))
    return NULL;
  *flag = flag_names[i].flag;
  return flag_names[i].name;
}

int
sr_seccomp_parse_flags (char *const *flags, unsigned int *out, sr_error **err)
{
  *out = 0;
  for (; flags != NULL && *flags != NULL; flags++)
    {
      size_t i;
      for (i = 0; i < ARRAY_SIZE (flag_names); i++)
        if (strcmp (*flags, flag_names[i].name) == 0)
          break;
      if (i == ARRAY_SIZE (flag_names))
        return sr_fail (err, 0, "seccomp: unknown flag \"%s\"", *flags);
      *out |= flag_names[i].flag;
    }
  return 0;
}

/* The spec's actions; those with `data` take errnoRet (default EPERM).
 * SCMP_ACT_KILL is KILL_THREAD, as in runc. */
static const struct
{
  const char *name;
  uint32_t action;
  bool data;
} action_names[] = {
  { "SCMP_ACT_KILL", SCMP_ACT_KILL_THREAD, false },
  { "SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD, false },
  { "SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS, false },
  { "SCMP_ACT_TRAP", SCMP_ACT_TRAP, false },
  { "SCMP_ACT_ERRNO", SCMP_ACT_ERRNO (0), true },
  { "SCMP_ACT_TRACE", SCMP_ACT_TRACE (0), true },
  { "SCMP_ACT_ALLOW", SCMP_ACT_ALLOW, false },
  { "SCMP_ACT_LOG", SCMP_ACT_LOG, false },
  { "SCMP_ACT_NOTIFY", SCMP_ACT_NOTIFY, false },
};

const char *
sr_seccomp_action_name (size_t i)
{
  return i < ARRAY_SIZE (action_names) ? action_names[i].name : NULL;
}

/* errnoRet applies to ERRNO and TRACE only, and defaults to EPERM. */
static int
parse_action (const char *name, const oci_opt_u32 *errno_ret, uint32_t *out,
              sr_error **err)
{
  uint32_t data = errno_ret->set ? errno_ret->value : EPERM;

  if (errno_ret->set && errno_ret->value > 0xffff)
    return sr_fail (err, 0, "seccomp: errnoRet %u out of range",
                    errno_ret->value);
  for (size_t i = 0; i < ARRAY_SIZE (action_names); i++)
    if (str_eq (name, action_names[i].name))
      {
        *out = action_names[i].action | (action_names[i].data ? data : 0);
        return 0;
      }
  return sr_fail (err, 0, "seccomp: unknown action \"%s\"",
                  name ? name : "");
}

static const struct
{
  const char *name;
  enum scmp_compare op;
} op_names[] = {
  { "SCMP_CMP_NE", SCMP_CMP_NE },
  { "SCMP_CMP_LT", SCMP_CMP_LT },
  { "SCMP_CMP_LE", SCMP_CMP_LE },
  { "SCMP_CMP_EQ", SCMP_CMP_EQ },
  { "SCMP_CMP_GE", SCMP_CMP_GE },
  { "SCMP_CMP_GT", SCMP_CMP_GT },
  { "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

const char *
sr_seccomp_operator_name (size_t i)
{
  return i < ARRAY_SIZE (op_names) ? op_names[i].name : NULL;
}

static int
parse_op (const char *name, enum scmp_compare *out, sr_error **err)
{
  for (size_t i = 0; i < ARRAY_SIZE (op_names); i++)
    if (str_eq (name, op_names[i].name))
      {
        *out = op_names[i].op;
        return 0;
      }
  return sr_fail (err, 0, "seccomp: unknown operator \"%s\"",
                  name ? name : "");
}

/* The architectures the spec names (config-linux.md); any other
 * SCMP_ARCH_* that libseccomp knows is accepted too. */
static const char *const arch_names[] = {
  "SCMP_ARCH_X86",         "SCMP_ARCH_X86_64",      "SCMP_ARCH_X32",
  "SCMP_ARCH_ARM",         "SCMP_ARCH_AARCH64",     "SCMP_ARCH_LOONGARCH64",
  "SCMP_ARCH_M68K",        "SCMP_ARCH_MIPS",        "SCMP_ARCH_MIPS64",
  "SCMP_ARCH_MIPS64N32",   "SCMP_ARCH_MIPSEL",      "SCMP_ARCH_MIPSEL64",
  "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",         "SCMP_ARCH_PPC64",
  "SCMP_ARCH_PPC64LE",     "SCMP_ARCH_S390",        "SCMP_ARCH_S390X",
  "SCMP_ARCH_PARISC",      "SCMP_ARCH_PARISC64",    "SCMP_ARCH_RISCV64",
  "SCMP_ARCH_SH",          "SCMP_ARCH_SHEB",
};

/* "SCMP_ARCH_X86_64" -> libseccomp's "x86_64".  0: unknown to this
 * libseccomp (a well-formed name from a newer spec). */
static int
parse_arch (const char *name, uint32_t *token, sr_error **err)
{
  char lower[32];
  size_t i;

  if (!str_has_prefix (name, "SCMP_ARCH_")
      || strlen (name + 10) >= sizeof lower || name[10] == '\0')
    return sr_fail (err, 0, "seccomp: unknown architecture \"%s\"", name);
  for (i = 0; name[10 + i] != '\0'; i++)
    lower[i] = (char) tolower ((unsigned char) name[10 + i]);
  lower[i] = '\0';
  *token = seccomp_arch_resolve_name (lower);
  return 0;
}

const char *
sr_seccomp_arch_name (size_t i, bool *usable)
{
  uint32_t token = 0;

  if (i >= ARRAY_SIZE (arch_names))
    return NULL;
  *usable = parse_arch (arch_names[i], &token, NULL) == 0 && token != 0;
  return arch_names[i];
}

/* ---- building the filter ---- */

/* Can a process on this kernel make syscalls as `token`?  The native
 * architecture and its compat modes only: a filter section for any other
 * (the aarch64 and arm rules of a profile on x86_64) is never reached, and
 * costs the kernel conversion and JIT time at every load.  An unknown
 * native architecture keeps everything. */
static bool
runs_here (uint32_t token)
{
  static const struct
  {
    uint32_t native, compat[2];
  } compat[] = {
    { SCMP_ARCH_X86_64, { SCMP_ARCH_X86, SCMP_ARCH_X32 } },
    { SCMP_ARCH_AARCH64, { SCMP_ARCH_ARM, 0 } },
    { SCMP_ARCH_PPC64, { SCMP_ARCH_PPC, 0 } },
    { SCMP_ARCH_PPC64LE, { 0, 0 } },
    { SCMP_ARCH_S390X, { SCMP_ARCH_S390, 0 } },
    { SCMP_ARCH_RISCV64, { 0, 0 } },
  };
  uint32_t native = seccomp_arch_native ();
  if (token == native)
    return true;
  for (size_t i = 0; i < ARRAY_SIZE (compat); i++)
    if (compat[i].native == native)
      return token == compat[i].compat[0] || token == compat[i].compat[1];
  return true;
}

static int
add_architectures (scmp_filter_ctx ctx, char *const *arches, sr_error **err)
{
  for (; arches != NULL && *arches != NULL; arches++)
    {
      uint32_t token = 0;
      int ret;

      if (parse_arch (*arches, &token, err) < 0)
        return -1;
      if (token == 0)
        {
          /* Its syscalls will meet the bad-arch action: safe. */
          sr_warn ("seccomp: architecture \"%s\" not supported by "
                   "libseccomp, ignored",
                   *arches);
          continue;
        }
      if (!runs_here (token))
        {
          sr_debug ("seccomp: architecture \"%s\" cannot run here, left out",
                    *arches);
          continue;
        }
      ret = seccomp_arch_add (ctx, token);
      if (ret < 0 && ret != -EEXIST)
        return sr_fail (err, -ret, "seccomp: add architecture \"%s\"",
                        *arches);
    }
  return 0;
}

/* The conditions of one syscall entry; *split when two test the same
 * argument (libseccomp refuses that within one rule). */
static int
build_conditions (const oci_seccomp_syscall *sc, struct scmp_arg_cmp *conds,
                  bool *split, sr_error **err)
{
  unsigned int seen[SYSCALL_MAX_ARGS] = { 0 };
  size_t i;

  *split = false;
  for (i = 0; i < sc->args_len; i++)
    {
      const oci_seccomp_arg *a = &sc->args[i];
      enum scmp_compare op = _SCMP_CMP_MIN;

      if (a->index >= SYSCALL_MAX_ARGS)
        return sr_fail (err, 0, "seccomp: argument index %u out of range",
                        a->index);
      if (parse_op (a->op, &op, err) < 0)
        return -1;
      if (seen[a->index]++)
        *split = true;
      /* MASKED_EQ: (arg & value) == valueTwo. */
      conds[i] = (struct scmp_arg_cmp){
        .arg = a->index,
        .op = op,
        .datum_a = a->value,
        .datum_b = op == SCMP_CMP_MASKED_EQ ? a->value_two.value : 0,
      };
    }
  return 0;
}

static int
add_rule_for (scmp_filter_ctx ctx, const char *name, uint32_t action,
              const struct scmp_arg_cmp *conds, size_t n, bool split,
              sr_error **err)
{
  int nr = seccomp_syscall_resolve_name (name);
  int ret = 0;
  size_t i;

  if (nr == __NR_SCMP_ERROR)
    {
      sr_debug ("seccomp: unknown syscall \"%s\", skipped", name);
      return 0;
    }
  if (!split)
    ret = seccomp_rule_add_array (ctx, action, nr, (unsigned int) n, conds);
  for (i = 0; split && i < n && ret == 0; i++)
    ret = seccomp_rule_add_array (ctx, action, nr, 1, &conds[i]);
  if (ret < 0)
    return sr_fail (err, -ret, "seccomp: add rule for syscall \"%s\"", name);
  return 0;
}

static int
add_syscall_entry (scmp_filter_ctx ctx, const oci_seccomp_syscall *sc,
                   uint32_t default_action, sr_error **err)
{
  _cleanup_free_ struct scmp_arg_cmp *conds = NULL;
  char *const *name;
  uint32_t action;
  bool split;

  if (parse_action (sc->action, &sc->errno_ret, &action, err) < 0)
    return -1;
  conds = xcalloc (sc->args_len + 1, sizeof *conds);
  if (build_conditions (sc, conds, &split, err) < 0)
    return -1;

  for (name = sc->names; name != NULL && *name != NULL; name++)
    {
      /* The init passes the listener fd with sendmsg and may write to its
       * sync socket once the filter is in place: a notification nobody can
       * answer yet would hang it for good. */
      if (action == SCMP_ACT_NOTIFY
          && (strcmp (*name, "write") == 0 || strcmp (*name, "sendmsg") == 0))
        return sr_fail (err, 0,
                        "seccomp: SCMP_ACT_NOTIFY cannot be used for the %s "
                        "syscall",
                        *name);
      if (action == default_action)
        {
          sr_debug ("seccomp: rule for \"%s\" has the default action, "
                    "skipped",
                    *name);
          continue;
        }
      if (add_rule_for (ctx, *name, action, conds, sc->args_len, split, err)
          < 0)
        return -1;
    }
  return 0;
}

/* Syscalls of architectures the profile does not list (i386 `int 0x80`
 * from an x86_64 process, x32) must not fall through to anything: kill the
 * whole process, or the thread where the kernel lacks KILL_PROCESS. */
static int
set_attributes (scmp_filter_ctx ctx, sr_error **err)
{
  int ret
      = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (ret < 0)
    ret = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH,
                            SCMP_ACT_KILL_THREAD);
  if (ret < 0)
    return sr_fail (err, -ret, "seccomp: set bad-architecture action");
  /* A binary tree keeps big allow lists cheap per syscall; optional. */
  (void) seccomp_attr_set (ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  return 0;
}

static int
export_bpf (scmp_filter_ctx ctx, struct sock_filter **insns, size_t *len,
            sr_error **err)
{
  _cleanup_close_ int fd = memfd_create ("sandrun-seccomp", MFD_CLOEXEC);
  struct stat st;
  void *buf;
  int ret;

  if (fd < 0)
    return sr_fail (err, errno, "seccomp: memfd_create");
  ret = seccomp_export_bpf (ctx, fd);
  if (ret < 0)
    return sr_fail (err, -ret, "seccomp: export BPF");
  if (fstat (fd, &st) < 0)
    return sr_fail (err, errno, "seccomp: fstat exported BPF");
  if (st.st_size <= 0 || st.st_size % sizeof (struct sock_filter) != 0
      || st.st_size > BPF_MAXINSNS * (off_t) sizeof (struct sock_filter))
    return sr_fail (err, E2BIG, "seccomp: exported BPF has %lld bytes",
                    (long long) st.st_size);
  buf = xmalloc ((size_t) st.st_size);
  if (pread (fd, buf, (size_t) st.st_size, 0) != st.st_size)
    {
      free (buf);
      return sr_fail (err, errno ? errno : EIO, "seccomp: read exported BPF");
    }
  *insns = buf;
  *len = (size_t) st.st_size / sizeof (struct sock_filter);
  return 0;
}

int
sr_seccomp_compile (const oci_seccomp *p, struct sock_filter **insns,
                    size_t *len, sr_error **err)
{
  _cleanup_seccomp_ scmp_filter_ctx ctx = NULL;
  uint32_t default_action;
  size_t i;

  if (parse_action (p->default_action, &p->default_errno_ret, &default_action,
                    err)
      < 0)
    return -1;
  if (default_action == SCMP_ACT_NOTIFY)
    return sr_fail (err, 0,
                    "seccomp: SCMP_ACT_NOTIFY cannot be the default action");
  ctx = seccomp_init (default_action);
  if (ctx == NULL)
    return sr_fail (err, EINVAL, "seccomp: init filter with \"%s\"",
                    p->default_action);
  if (set_attributes (ctx, err) < 0
      || add_architectures (ctx, p->architectures, err) < 0)
    return -1;
  for (i = 0; i < p->syscalls_len; i++)
    if (add_syscall_entry (ctx, &p->syscalls[i], default_action, err) < 0)
      return -1;
  return export_bpf (ctx, insns, len, err);
}
