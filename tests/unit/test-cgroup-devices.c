/* Device cgroup rules and the eBPF filter compiled from them: the program
 * is run by a small interpreter of the instructions it uses and must agree
 * with the rules read in order (the last match wins, default deny). */
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/core/cgroup/devices.h"
#include "sandrun/util.h"
#include "unit.h"

static int
run_prog (const struct bpf_insn *p, size_t n, unsigned type, unsigned access,
          unsigned major, unsigned minor)
{
  struct bpf_cgroup_dev_ctx ctx = { (access << 16) | type, major, minor };
  uint64_t r[11] = { 0 };
  size_t pc = 0;
  for (int steps = 0; pc < n && steps < 100000; steps++)
    {
      const struct bpf_insn *i = &p[pc++];
      uint8_t cls = BPF_CLASS (i->code), op = BPF_OP (i->code);
      if (i->code == (BPF_LDX | BPF_MEM | BPF_W))
        {
          uint32_t v;
          memcpy (&v, (const char *) &ctx + i->off, sizeof v);
          r[i->dst_reg] = v;
        }
      else if (cls == BPF_ALU64)
        {
          uint64_t src = BPF_SRC (i->code) == BPF_X ? r[i->src_reg]
                                                     : (uint64_t) (int64_t) i->imm;
          if (op == BPF_MOV)
            r[i->dst_reg] = src;
          else if (op == BPF_AND)
            r[i->dst_reg] &= src;
          else if (op == BPF_RSH)
            r[i->dst_reg] >>= src;
          else
            return -2;
        }
      else if (cls == BPF_JMP && op == BPF_EXIT)
        return (int) r[0];
      else if (cls == BPF_JMP && (op == BPF_JNE || op == BPF_JEQ))
        {
          bool eq = r[i->dst_reg] == (uint64_t) (int64_t) i->imm;
          if ((op == BPF_JEQ) == eq)
            pc += (size_t) i->off;
        }
      else
        return -2;
    }
  return -3;
}

/* The reference: the rules in order, the last that matches decides. */
static int
reference (const struct sr_cg_dev_rule *rules, size_t n, char type,
           unsigned access, int64_t major, int64_t minor)
{
  int verdict = 0;
  for (size_t i = 0; i < n; i++)
    {
      const struct sr_cg_dev_rule *r = &rules[i];
      if (r->type != 'a' && r->type != type)
        continue;
      if ((r->major >= 0 && r->major != major) || (r->minor >= 0 && r->minor != minor))
        continue;
      bool match = r->allow ? (access & ~r->access) == 0 : (access & r->access) != 0;
      if (match)
        verdict = r->allow;
    }
  return verdict;
}

static void
test_rules_list (void)
{
  oci_device_rule cfg[] = {
    { .allow = true, .type = "c", .major = { true, 10 }, .minor = { true, 200 }, .access = "rw" },
  };
  oci_resources res = { .devices = cfg, .devices_len = 1 };
  oci_device devs[] = { { .type = "b", .major = 8, .minor = 0 },
                        { .type = "p", .major = 0, .minor = 0 } };
  struct sr_cg_dev_rule *rules = NULL;
  size_t n = 0;
  sr_error *err = NULL;
  CHECK (sr_cg_device_rules (&res, devs, 2, &rules, &n, &err) == 0, "rules built");
  CHECK (n == 1 + 1 + 11, "deny-all, config, defaults; linux.devices get no rule: %zu", n);
  if (n >= 3)
    {
      CHECK (!rules[0].allow && rules[0].type == 'a', "starts with deny all");
      CHECK (rules[1].allow && rules[1].major == 10 && rules[1].access == (SR_DEV_READ | SR_DEV_WRITE),
             "config rule next");
      CHECK (rules[n - 1].major != 8, "no rule for the linux.devices node");
    }
  free (rules);

  oci_device_rule bad[] = { { .allow = true, .type = "x", .access = "r" },
                            { .allow = true, .type = "c", .access = "rx" } };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    {
      oci_resources r = { .devices = &bad[i], .devices_len = 1 };
      rules = NULL;
      err = NULL;
      CHECK (sr_cg_device_rules (&r, NULL, 0, &rules, &n, &err) < 0, "refuse bad rule %zu", i);
      free (rules);
      sr_error_free (err);
    }
}

static void
test_bpf (void)
{
  const struct sr_cg_dev_rule rules[] = {
    { false, 'a', -1, -1, SR_DEV_ALL },
    { true, 'c', 1, 3, SR_DEV_ALL },
    { true, 'c', 136, -1, SR_DEV_READ | SR_DEV_WRITE },
    { true, 'b', -1, -1, SR_DEV_MKNOD },
    { false, 'c', 136, 5, SR_DEV_WRITE },
    { true, 'c', 4, -1, SR_DEV_READ },
  };
  void *prog = NULL;
  size_t n = sr_cg_bpf_compile (rules, ARRAY_SIZE (rules), &prog);
  int mismatches = 0, errors = 0;
  const char types[] = { 'c', 'b' };
  const int64_t majors[] = { 1, 4, 8, 136 }, minors[] = { 0, 3, 5 };
  for (size_t t = 0; t < 2; t++)
    for (unsigned acc = 1; acc <= SR_DEV_ALL; acc++)
      for (size_t ma = 0; ma < ARRAY_SIZE (majors); ma++)
        for (size_t mi = 0; mi < ARRAY_SIZE (minors); mi++)
          {
            int got = run_prog (prog, n, types[t] == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR,
                                acc, (unsigned) majors[ma], (unsigned) minors[mi]);
            int want = reference (rules, ARRAY_SIZE (rules), types[t], acc, majors[ma], minors[mi]);
            errors += got < 0;
            mismatches += got != want;
          }
  CHECK (errors == 0, "the program runs to an exit");
  CHECK (mismatches == 0, "program agrees with the rules (%d mismatches)", mismatches);
  CHECK (run_prog (prog, n, BPF_DEVCG_DEV_CHAR, SR_DEV_READ | SR_DEV_WRITE, 136, 5) == 0,
         "a later deny of write wins over an earlier allow");
  CHECK (run_prog (prog, n, BPF_DEVCG_DEV_CHAR, SR_DEV_READ, 136, 5) == 1,
         "read is still allowed");
  CHECK (run_prog (prog, n, BPF_DEVCG_DEV_CHAR, SR_DEV_READ, 1, 5) == 0, "default deny");
  free (prog);
}

int
main (void)
{
  test_rules_list ();
  test_bpf ();
  return unit_finish ();
}
