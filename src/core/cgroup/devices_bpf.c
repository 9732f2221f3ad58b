/* cgroup v2 has no devices controller: access to device nodes is decided
 * by a BPF_PROG_TYPE_CGROUP_DEVICE program attached to the cgroup.  The
 * program checks the rules from the last to the first and returns the
 * verdict of the first that matches (so a later rule wins, as with v1's
 * files); when none matches it denies. */
#include <errno.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "devices.h"
#include "internal.h"
#include "sandrun/util.h"

/* Registers: r1 the context on entry; r2 its access_type; r3 the device
 * type, r4 the access, r5 the major and r6 the minor; r0 scratch and
 * verdict. */
enum { R0, R1, R2, R3, R4, R5, R6 };

static struct bpf_insn
insn (uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
  return (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src,
                            .off = off, .imm = imm };
}

static struct bpf_insn
load_ctx_u32 (uint8_t dst, int16_t off)
{
  return insn (BPF_LDX | BPF_MEM | BPF_W, dst, R1, off, 0);
}

static struct bpf_insn
alu_imm (uint8_t op, uint8_t dst, int32_t imm)
{
  return insn (BPF_ALU64 | op | BPF_K, dst, 0, 0, imm);
}

static struct bpf_insn
mov_reg (uint8_t dst, uint8_t src)
{
  return insn (BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0);
}

/* A jump to the next rule; its offset is patched once the rule's length
 * is known. */
static struct bpf_insn
jump_next (uint8_t op, uint8_t reg, int32_t imm)
{
  return insn (BPF_JMP | op | BPF_K, reg, 0, 0, imm);
}

struct prog
{
  struct bpf_insn *v;
  size_t n, cap;
};

static void
emit (struct prog *p, struct bpf_insn i)
{
  if (p->n == p->cap)
    {
      p->cap = p->cap ? p->cap * 2 : 64;
      p->v = xrealloc (p->v, p->cap * sizeof *p->v);
    }
  p->v[p->n++] = i;
}

static void
emit_rule (struct prog *p, const struct sr_cg_dev_rule *r)
{
  size_t start = p->n;
  if (r->type != 'a')
    emit (p, jump_next (BPF_JNE, R3, r->type == 'b' ? BPF_DEVCG_DEV_BLOCK
                                                    : BPF_DEVCG_DEV_CHAR));
  if ((r->access & SR_DEV_ALL) != SR_DEV_ALL || !r->allow)
    {
      /* An allow matches when it grants every requested access; a deny
       * as soon as it covers one of them. */
      emit (p, mov_reg (R0, R4));
      if (r->allow)
        {
          emit (p, alu_imm (BPF_AND, R0, (int32_t) (~r->access & SR_DEV_ALL)));
          emit (p, jump_next (BPF_JNE, R0, 0));
        }
      else
        {
          emit (p, alu_imm (BPF_AND, R0, (int32_t) r->access));
          emit (p, jump_next (BPF_JEQ, R0, 0));
        }
    }
  if (r->major >= 0)
    emit (p, jump_next (BPF_JNE, R5, (int32_t) r->major));
  if (r->minor >= 0)
    emit (p, jump_next (BPF_JNE, R6, (int32_t) r->minor));
  emit (p, alu_imm (BPF_MOV, R0, r->allow ? 1 : 0));
  emit (p, insn (BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  for (size_t i = start; i < p->n; i++)
    if (BPF_CLASS (p->v[i].code) == BPF_JMP && BPF_OP (p->v[i].code) != BPF_EXIT)
      p->v[i].off = (int16_t) (p->n - i - 1);
}

size_t
sr_cg_bpf_compile (const struct sr_cg_dev_rule *rules, size_t n, void **out)
{
  struct prog p = { 0 };
  emit (&p, load_ctx_u32 (R2, offsetof (struct bpf_cgroup_dev_ctx, access_type)));
  emit (&p, mov_reg (R3, R2));
  emit (&p, alu_imm (BPF_AND, R3, 0xffff));
  emit (&p, mov_reg (R4, R2));
  emit (&p, alu_imm (BPF_RSH, R4, 16));
  emit (&p, load_ctx_u32 (R5, offsetof (struct bpf_cgroup_dev_ctx, major)));
  emit (&p, load_ctx_u32 (R6, offsetof (struct bpf_cgroup_dev_ctx, minor)));
  for (size_t i = n; i > 0; i--)
    emit_rule (&p, &rules[i - 1]);
  emit (&p, alu_imm (BPF_MOV, R0, 0));
  emit (&p, insn (BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  *out = p.v;
  return p.n;
}

static int
bpf (int cmd, union bpf_attr *attr)
{
  return (int) syscall (SYS_bpf, cmd, attr, sizeof *attr);
}

static int
load_prog (const struct bpf_insn *insns, size_t n, sr_error **err)
{
  static char log[16384];
  union bpf_attr attr;
  memset (&attr, 0, sizeof attr);
  attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  attr.insns = (uint64_t) (uintptr_t) insns;
  attr.insn_cnt = (uint32_t) n;
  attr.license = (uint64_t) (uintptr_t) "GPL";
  int fd = bpf (BPF_PROG_LOAD, &attr);
  if (fd >= 0)
    return fd;
  int saved = errno;
  if (saved == EPERM || saved == ENOSYS || saved == EINVAL)
    {
      /* Ask the verifier why (only useful for EINVAL, cheap anyway). */
      attr.log_buf = (uint64_t) (uintptr_t) log;
      attr.log_size = sizeof log;
      attr.log_level = 1;
      log[0] = '\0';
      fd = bpf (BPF_PROG_LOAD, &attr);
      if (fd >= 0)
        return fd;
    }
  return sr_fail (err, saved, "devices: load the eBPF device filter%s%s",
                  log[0] ? ": " : "", log);
}

/* The programs attached to the cgroup itself (not inherited). */
static int
query_attached (int cgfd, uint32_t *ids, uint32_t *count)
{
  union bpf_attr attr;
  memset (&attr, 0, sizeof attr);
  attr.query.target_fd = (uint32_t) cgfd;
  attr.query.attach_type = BPF_CGROUP_DEVICE;
  attr.query.prog_ids = (uint64_t) (uintptr_t) ids;
  attr.query.prog_cnt = *count;
  if (bpf (BPF_PROG_QUERY, &attr) < 0)
    return -1;
  *count = attr.query.prog_cnt;
  return 0;
}

static void
detach_ids (int cgfd, const uint32_t *ids, uint32_t count)
{
  for (uint32_t i = 0; i < count; i++)
    {
      union bpf_attr attr;
      memset (&attr, 0, sizeof attr);
      attr.prog_id = ids[i];
      _cleanup_close_ int fd = bpf (BPF_PROG_GET_FD_BY_ID, &attr);
      if (fd < 0)
        continue;
      memset (&attr, 0, sizeof attr);
      attr.target_fd = (uint32_t) cgfd;
      attr.attach_bpf_fd = (uint32_t) fd;
      attr.attach_type = BPF_CGROUP_DEVICE;
      bpf (BPF_PROG_DETACH, &attr);
    }
}

int
sr_cg_bpf_devices (int dirfd, const struct sr_cg_dev_rule *rules, size_t n,
                   sr_error **err)
{
  _cleanup_free_ void *insns = NULL;
  size_t ninsns = sr_cg_bpf_compile (rules, n, &insns);
  _cleanup_close_ int prog = load_prog (insns, ninsns, err);
  if (prog < 0)
    return -1;

  uint32_t old[64];
  uint32_t nold = ARRAY_SIZE (old);
  if (query_attached (dirfd, old, &nold) < 0)
    nold = 0;

  union bpf_attr attr;
  memset (&attr, 0, sizeof attr);
  attr.target_fd = (uint32_t) dirfd;
  attr.attach_bpf_fd = (uint32_t) prog;
  attr.attach_type = BPF_CGROUP_DEVICE;
  attr.attach_flags = BPF_F_ALLOW_MULTI;
  if (bpf (BPF_PROG_ATTACH, &attr) < 0)
    return sr_fail (err, errno, "devices: attach the eBPF device filter");
  /* The new filter is in place before the old ones go: no moment without
   * one. */
  detach_ids (dirfd, old, nold);
  return 0;
}
