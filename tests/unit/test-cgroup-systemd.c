/* The systemd cgroup driver's pure half: unit names from cgroupsPath, and
 * linux.resources as unit properties (v1 and v2, systemd versions). */
#include <stdlib.h>
#include <string.h>

#include "../../src/core/cgroup/internal.h"
#include "oci-spec/oci-spec.h"
#include "core/cgroup/cgroup_systemd.h"
#include "sandrun/util.h"
#include "unit.h"

/* "ERR message" for a failure. */
static char *
error_text (sr_error *err)
{
  char *msg = xasprintf ("ERR %s", err->msg);
  sr_error_free (err);
  return msg;
}

/* Every property as "Name=value", one a line. */
static char *
props_text (const struct sr_sd_props *p)
{
  char *acc = xstrdup ("");
  for (size_t i = 0; i < p->len; i++)
    {
      _cleanup_free_ char *one = sr_sd_prop_format (&p->v[i]);
      char *next = xasprintf ("%s%s\n", acc, one);
      free (acc);
      acc = next;
    }
  return acc;
}

/* ---- unit names ------------------------------------------------------------ */

static char *
expand (const char *slice)
{
  char *path = NULL;
  sr_error *err = NULL;
  if (sr_sd_expand_slice (slice, &path, &err) < 0)
    return error_text (err);
  return path;
}

static void
test_expand_slice (void)
{
  struct { const char *slice, *want; } ok[] = {
    { "system.slice", "/system.slice" },
    { "a-b-c.slice", "/a.slice/a-b.slice/a-b-c.slice" },
    { "user-1000.slice", "/user.slice/user-1000.slice" },
    { "-.slice", "/" },
    { "machine.slice", "/machine.slice" },
  };
  for (size_t i = 0; i < ARRAY_SIZE (ok); i++)
    {
      _cleanup_free_ char *got = expand (ok[i].slice);
      CHECK_STR (got, ok[i].want, "expand %s", ok[i].slice);
    }
  const char *bad[] = { "system", ".slice", "-a.slice", "a-.slice", "a--b.slice",
                        "a/b.slice", "system.slicex", "" };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    {
      _cleanup_free_ char *got = expand (bad[i]);
      CHECK (str_has_prefix (got, "ERR invalid slice name"), "refuse slice \"%s\": %s",
             bad[i], got);
    }
}

/* "slice|name|path|scope" or "ERR ...". */
static char *
unit (const char *id, const char *cgroups_path)
{
  struct sr_sd_unit u;
  sr_error *err = NULL;
  if (sr_sd_unit_parse (id, cgroups_path, &u, &err) < 0)
    return error_text (err);
  char *s = xasprintf ("%s|%s|%s|%s", u.slice, u.name, u.path,
                       u.is_slice ? "slice" : "scope");
  sr_sd_unit_clear (&u);
  return s;
}

static void
test_unit_parse (void)
{
  struct { const char *path, *want; } ok[] = {
    { NULL, "system.slice|sandrun-web.scope|/system.slice/sandrun-web.scope|scope" },
    { "", "system.slice|sandrun-web.scope|/system.slice/sandrun-web.scope|scope" },
    { "machine.slice:libpod:abc",
      "machine.slice|libpod-abc.scope|/machine.slice/libpod-abc.scope|scope" },
    { ":docker:abc", "system.slice|docker-abc.scope|/system.slice/docker-abc.scope|scope" },
    { "system.slice::abc", "system.slice|abc.scope|/system.slice/abc.scope|scope" },
    { "kubepods-besteffort.slice:cri-containerd:1f",
      "kubepods-besteffort.slice|cri-containerd-1f.scope|"
      "/kubepods.slice/kubepods-besteffort.slice/cri-containerd-1f.scope|scope" },
    { "-.slice:p:web", "-.slice|p-web.scope|/p-web.scope|scope" },
    /* A slice unit: its place follows its own name, the prefix is unused. */
    { "system.slice:ignored:pod-a.slice", "system.slice|pod-a.slice|/pod.slice/pod-a.slice|slice" },
  };
  for (size_t i = 0; i < ARRAY_SIZE (ok); i++)
    {
      _cleanup_free_ char *got = unit ("web", ok[i].path);
      CHECK_STR (got, ok[i].want, "unit of %s", ok[i].path ? ok[i].path : "(none)");
    }
  struct { const char *path, *why; } bad[] = {
    { "/a/b", "expected the form \"slice:prefix:name\"" },
    { "a:b", "expected the form" },
    { "a:b:c:d", "expected the form" },
    { "system.slice:p:", "empty name" },
    { "system:p:n", "invalid slice name \"system\"" },
    { "a--b.slice:p:n", "invalid slice name" },
    { "a/b.slice:p:n", "invalid slice name" },
    { "system.slice:p:x@y", "invalid systemd unit name \"p-x@y.scope\"" },
    { "system.slice:p:a b", "invalid systemd unit name" },
    { "system.slice:p:-.slice", "the root slice" },
    { "system.slice:p:bad-.slice", "invalid slice name \"bad-.slice\"" },
    { "a;b.slice:p:n", "invalid slice name \"a;b.slice\"" },
    { "a b.slice:p:n", "invalid slice name" },
    { "a@b.slice:p:n", "invalid slice name" },
  };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    {
      _cleanup_free_ char *got = unit ("web", bad[i].path);
      CHECK (str_has_prefix (got, "ERR ") && strstr (got, bad[i].why) != NULL
                 && strstr (got, bad[i].path) != NULL,
             "refuse %s: %s", bad[i].path, got);
    }
  _cleanup_free_ char *long_name = xasprintf ("system.slice:p:%0300d", 0);
  _cleanup_free_ char *got = unit ("web", long_name);
  CHECK (strstr (got, "invalid systemd unit name") != NULL, "refuse a unit name over 255 bytes");
}

static void
test_version (void)
{
  struct { const char *s; int want; } cases[] = {
    { "252.39-1~deb12u2", 252 }, { "v245.4-1.fc32", 245 }, { "\"245\"", 245 },
    { "245-1.fc32", 245 },       { "239", 239 },           { "", -1 },
    { "abc", -1 },
  };
  for (size_t i = 0; i < ARRAY_SIZE (cases); i++)
    CHECK (sr_sd_parse_version (cases[i].s) == cases[i].want, "version \"%s\" -> %d (got %d)",
           cases[i].s, cases[i].want, sr_sd_parse_version (cases[i].s));
}

/* The record's mark is no hierarchy: lookups skip it. */
static void
test_record_mark (void)
{
  struct { const char *record, *key, *want; } cases[] = {
    { "/s.slice/u.scope" SR_SD_RECORD_MARK, "memory", "/s.slice/u.scope" },
    { "/s.slice/u.scope;cpuset:/c/u.scope" SR_SD_RECORD_MARK, "cpuset", "/c/u.scope" },
    { "/s.slice/u.scope" SR_SD_RECORD_MARK ";cpuset:/c/u.scope", "", "/s.slice/u.scope" },
  };
  for (size_t i = 0; i < ARRAY_SIZE (cases); i++)
    {
      char *path = NULL;
      sr_error *err = NULL;
      if (sr_cg_record_lookup (cases[i].record, cases[i].key, &path, &err) < 0)
        path = error_text (err);
      CHECK_STR (path, cases[i].want, "lookup \"%s\" in %s", cases[i].key, cases[i].record);
      free (path);
    }
}

/* ---- unit properties ------------------------------------------------------- */

static void
test_unit_props (void)
{
  struct sr_sd_unit scope = { .slice = "machine.slice", .name = "p-web.scope",
                              .path = "/machine.slice/p-web.scope" };
  _cleanup_sd_props_ struct sr_sd_props v2 = { NULL, 0 }, v1 = { NULL, 0 }, sl = { NULL, 0 };
  sr_sd_unit_props (&scope, "sandrun container web", 4242, true, &v2);
  _cleanup_free_ char *t2 = props_text (&v2);
  CHECK_STR (t2,
             "Description=sandrun container web\n"
             "Slice=machine.slice\n"
             "Delegate=yes\n"
             "PIDs=[4242]\n"
             "MemoryAccounting=yes\n"
             "CPUAccounting=yes\n"
             "IOAccounting=yes\n"
             "TasksAccounting=yes\n"
             "DefaultDependencies=no\n",
             "a scope on v2");
  sr_sd_unit_props (&scope, "d", 7, false, &v1);
  CHECK (sr_sd_props_find (&v1, "BlockIOAccounting") != NULL
             && sr_sd_props_find (&v1, "IOAccounting") == NULL,
         "v1 accounts BlockIO, not IO");
  const struct sr_sd_prop *pids = sr_sd_props_find (&v1, "PIDs");
  CHECK (pids != NULL && pids->type == SR_SD_U32S && pids->len == 1 && pids->u32s[0] == 7,
         "PIDs is an array of u32");

  struct sr_sd_unit slice = { .slice = "system.slice", .name = "pod-a.slice",
                              .path = "/pod.slice/pod-a.slice", .is_slice = true };
  sr_sd_unit_props (&slice, "d", 4242, true, &sl);
  const struct sr_sd_prop *wants = sr_sd_props_find (&sl, "Wants");
  CHECK (wants != NULL && str_eq (wants->str, "system.slice"), "a slice wants its parent");
  CHECK (sr_sd_props_find (&sl, "Slice") == NULL && sr_sd_props_find (&sl, "Delegate") == NULL
             && sr_sd_props_find (&sl, "PIDs") == NULL,
         "a slice: no Slice, Delegate or PIDs");
}

/* The properties of a linux.resources document: its device rules (with
 * `devs`) or its resources. */
static char *
props_of (const char *json, bool device_rules, const oci_device *devs, size_t ndevs, bool v2,
          int version)
{
  sr_error *err = NULL;
  oci_resources *res = oci_resources_parse_data (json, strlen (json), &err);
  if (res == NULL)
    return error_text (err);
  _cleanup_sd_props_ struct sr_sd_props p = { NULL, 0 };
  int r = device_rules ? sr_sd_device_props (res, devs, ndevs, &p, &err)
                       : sr_sd_resource_props (res, v2, version, &p, &err);
  oci_resources_free (res);
  return r < 0 ? error_text (err) : props_text (&p);
}

static char *
resources (const char *json, bool v2, int version)
{
  return props_of (json, false, NULL, 0, v2, version);
}

static void
check_resources (const char *json, bool v2, int version, const char *want)
{
  _cleanup_free_ char *got = resources (json, v2, version);
  CHECK_STR (got, want, "%s v%d systemd %d: %s", v2 ? "cgroup" : "cgroup", v2 ? 2 : 1, version,
             json);
}

static void
test_memory (void)
{
  check_resources ("{\"memory\":{\"limit\":1048576,\"reservation\":524288,"
                   "\"swap\":3145728}}",
                   true, 252,
                   "MemoryMax=1048576\nMemoryLow=524288\nMemorySwapMax=2097152\n");
  check_resources ("{\"memory\":{\"limit\":-1}}", true, 252,
                   "MemoryMax=infinity\nMemorySwapMax=infinity\n");
  check_resources ("{\"memory\":{\"limit\":1048576,\"swap\":-1}}", true, 252,
                   "MemoryMax=1048576\nMemorySwapMax=infinity\n");
  check_resources ("{\"memory\":{\"limit\":1048576,\"swap\":1048576}}", true, 252,
                   "MemoryMax=1048576\n");
  _cleanup_free_ char *bad = resources ("{\"memory\":{\"limit\":2097152,\"swap\":1048576}}",
                                        true, 252);
  CHECK (strstr (bad, "ERR memory.swap 1048576 is below") != NULL,
         "swap below the limit is convert.c's error: %s", bad);
  /* v1: MemoryLimit only; reservation and swap stay with the files. */
  check_resources ("{\"memory\":{\"limit\":1048576,\"reservation\":524288,"
                   "\"swap\":3145728}}",
                   false, 252, "MemoryLimit=1048576\n");
  check_resources ("{\"memory\":{\"limit\":-1}}", false, 252, "MemoryLimit=infinity\n");
}

static void
test_cpu (void)
{
  _cleanup_free_ char *w = xasprintf ("CPUWeight=%llu\n",
                                      (unsigned long long) sr_cg_shares_to_weight (512));
  check_resources ("{\"cpu\":{\"shares\":512}}", true, 252, w);
  check_resources ("{\"cpu\":{\"shares\":1024}}", true, 252, "CPUWeight=100\n");
  check_resources ("{\"cpu\":{\"shares\":512}}", false, 252, "CPUShares=512\n");
  check_resources ("{\"cpu\":{\"quota\":50000,\"period\":100000}}", true, 252,
                   "CPUQuotaPeriodUSec=100000\nCPUQuotaPerSecUSec=500000\n");
  /* 12.345% rounds up to 13%: the unit is never below the cgroup. */
  check_resources ("{\"cpu\":{\"quota\":12345,\"period\":100000}}", false, 252,
                   "CPUQuotaPeriodUSec=100000\nCPUQuotaPerSecUSec=130000\n");
  check_resources ("{\"cpu\":{\"quota\":20000}}", true, 252, "CPUQuotaPerSecUSec=200000\n");
  check_resources ("{\"cpu\":{\"quota\":-1,\"period\":50000}}", true, 252,
                   "CPUQuotaPeriodUSec=50000\nCPUQuotaPerSecUSec=infinity\n");
  check_resources ("{\"cpu\":{\"quota\":50000,\"period\":100000}}", true, 241,
                   "CPUQuotaPerSecUSec=500000\n");
  check_resources ("{\"cpu\":{\"quota\":9223372036854775807}}", true, 252,
                   "CPUQuotaPerSecUSec=infinity\n");
  check_resources ("{\"cpu\":{\"cpus\":\"0-3,8\",\"mems\":\"0\"}}", true, 252,
                   "AllowedCPUs=0x0f01\nAllowedMemoryNodes=0x01\n");
  check_resources ("{\"cpu\":{\"cpus\":\"9\"}}", false, 244, "AllowedCPUs=0x0002\n");
  check_resources ("{\"cpu\":{\"cpus\":\"0-3\",\"mems\":\"0\"}}", true, 243, "");
  check_resources ("{\"cpu\":{\"cpus\":\"0-3\"}}", true, -1, "");
  check_resources ("{\"cpu\":{\"cpus\":\"\"}}", true, 252, "");
  _cleanup_free_ char *bad = resources ("{\"cpu\":{\"cpus\":\"3-1\"}}", true, 252);
  CHECK (strstr (bad, "ERR cpu.cpus: invalid list \"3-1\"") != NULL, "bad cpus: %s", bad);
}

static void
test_pids_blkio (void)
{
  check_resources ("{\"pids\":{\"limit\":100}}", true, 252, "TasksMax=100\n");
  check_resources ("{\"pids\":{\"limit\":-1}}", false, 252, "TasksMax=infinity\n");
  check_resources ("{\"pids\":{\"limit\":0}}", true, 252, "");
  _cleanup_free_ char *io = xasprintf ("IOWeight=%llu\n",
                                       (unsigned long long) sr_cg_blkio_weight_to_io_weight (500));
  check_resources ("{\"blockIO\":{\"weight\":500}}", true, 252, io);
  check_resources ("{\"blockIO\":{\"weight\":500}}", false, 252, "BlockIOWeight=500\n");
  check_resources ("{}", true, 252, "");
}

static void
test_unified (void)
{
  check_resources ("{\"memory\":{\"limit\":1048576},\"unified\":{\"memory.high\":\"524288\","
                   "\"memory.max\":\"max\",\"pids.max\":\" 20\\n\",\"cpu.weight\":\"50\","
                   "\"memory.min\":\"1\",\"io.weight\":\"default 100\"}}",
                   true, 252,
                   "MemoryMax=1048576\nMemoryHigh=524288\nMemoryMax=infinity\nTasksMax=20\n"
                   "CPUWeight=50\nMemoryMin=1\n");
  check_resources ("{\"unified\":{\"cpu.max\":\"max 50000\"}}", true, 252,
                   "CPUQuotaPeriodUSec=50000\nCPUQuotaPerSecUSec=infinity\n");
  check_resources ("{\"unified\":{\"cpu.max\":\"25000\"}}", true, 252,
                   "CPUQuotaPeriodUSec=100000\nCPUQuotaPerSecUSec=250000\n");
  check_resources ("{\"unified\":{\"cpuset.cpus\":\"1\"}}", true, 252, "AllowedCPUs=0x02\n");
  check_resources ("{\"unified\":{\"memory.high\":\"1\"}}", false, 252, "");
  const char *bad[] = { "{\"unified\":{\"memory.high\":\"lots\"}}",
                        "{\"unified\":{\"cpu.weight\":\"max\"}}",
                        "{\"unified\":{\"cpu.max\":\"1 2 3\"}}",
                        "{\"unified\":{\"cpu.max\":\"\"}}" };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    {
      _cleanup_free_ char *got = resources (bad[i], true, 252);
      CHECK (str_has_prefix (got, "ERR unified: "), "refuse %s: %s", bad[i], got);
    }
}

/* ---- devices --------------------------------------------------------------- */

static char *
devices (const char *json, const oci_device *devs, size_t ndevs)
{
  return props_of (json, true, devs, ndevs, true, 252);
}

#define DEFAULT_ALLOW                                                         \
  "char-* m, block-* m, /dev/char/1:3 rwm, /dev/char/1:5 rwm, "               \
  "/dev/char/1:7 rwm, /dev/char/1:8 rwm, /dev/char/1:9 rwm, "                 \
  "/dev/char/5:0 rwm, /dev/char/5:1 rwm, /dev/char/5:2 rwm, char-136 rwm"

static void
test_devices (void)
{
  _cleanup_free_ char *deflt = devices ("{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}]}",
                                        NULL, 0);
  CHECK_STR (deflt,
             "DevicePolicy=strict\nDeviceAllow=[]\nDeviceAllow=[" DEFAULT_ALLOW "]\n",
             "the default rules: strict, reset, then the list");

  oci_device fuse[] = { { .type = "c", .path = "/dev/fuse", .major = 10, .minor = 229 },
                        { .type = "b", .path = "/dev/loop0", .major = 7, .minor = 0 },
                        { .type = "p", .path = "/dev/fifo" } };
  _cleanup_free_ char *with = devices ("{}", fuse, ARRAY_SIZE (fuse));
  CHECK (strstr (with, "/dev/char/10:229 rwm") != NULL && strstr (with, "/dev/block/7:0 rwm")
             && strstr (with, "fifo") == NULL,
         "linux.devices are allowed (not fifos): %s", with);

  _cleanup_free_ char *all = devices ("{\"devices\":[{\"allow\":true,\"access\":\"rwm\"}]}",
                                      NULL, 0);
  CHECK_STR (all, "DevicePolicy=auto\nDeviceAllow=[]\n", "allow everything: policy auto");

  /* A hole in a wide allow cannot be expressed: the wide allow loses what
   * the hole denies, everywhere (never wider than our rules). */
  _cleanup_free_ char *hole = devices ("{\"devices\":[{\"allow\":true,\"access\":\"rwm\"},"
                                       "{\"allow\":false,\"type\":\"c\",\"major\":1,"
                                       "\"minor\":3,\"access\":\"w\"}]}",
                                       NULL, 0);
  CHECK (str_has_prefix (hole, "DevicePolicy=strict\n")
             && strstr (hole, "char-* rm,") != NULL && strstr (hole, "block-* rwm") != NULL
             && strstr (hole, "char-* rwm") == NULL,
         "deny carved out of allow-all: %s", hole);

  _cleanup_free_ char *rules = devices ("{\"devices\":[{\"allow\":false,\"access\":\"rwm\"},"
                                        "{\"allow\":true,\"type\":\"c\",\"minor\":5,"
                                        "\"access\":\"r\"},"
                                        "{\"allow\":true,\"type\":\"b\",\"major\":8,"
                                        "\"access\":\"rw\"},"
                                        "{\"allow\":true,\"type\":\"c\",\"major\":4,"
                                        "\"minor\":1,\"access\":\"rw\"},"
                                        "{\"allow\":false,\"type\":\"c\",\"major\":4,"
                                        "\"minor\":1,\"access\":\"w\"}]}",
                                        NULL, 0);
  CHECK (strstr (rules, "block-8 rw,") != NULL && strstr (rules, "/dev/char/4:1 r,") != NULL,
         "major wildcards and a later deny: %s", rules);
  CHECK (strstr (rules, "char-* r") == NULL && strstr (rules, "-5 r") == NULL,
         "\"c *:5\" has no systemd form and is left out: %s", rules);

  _cleanup_free_ char *bad = devices ("{\"devices\":[{\"allow\":true,\"type\":\"x\"}]}", NULL, 0);
  CHECK (str_has_prefix (bad, "ERR devices: invalid type"), "devices.c's errors: %s", bad);
}

static void
test_format (void)
{
  struct sr_sd_props p = { NULL, 0 };
  sr_sd_props_add (&p, "X", SR_SD_U64)->u64 = SR_SD_INFINITY;
  sr_sd_props_add (&p, "X", SR_SD_U64)->u64 = 5;
  CHECK (sr_sd_props_find (&p, "X")->u64 == 5, "find returns the last of a name");
  CHECK (sr_sd_props_find (&p, "Y") == NULL, "find: none");
  _cleanup_free_ char *inf = sr_sd_prop_format (&p.v[0]);
  CHECK_STR (inf, "X=infinity", "UINT64_MAX is infinity");
  sr_sd_props_clear (&p);
  CHECK (p.len == 0 && p.v == NULL, "clear empties the list");
}

int
main (void)
{
  test_expand_slice ();
  test_unit_parse ();
  test_version ();
  test_record_mark ();
  test_unit_props ();
  test_memory ();
  test_cpu ();
  test_pids_blkio ();
  test_unified ();
  test_devices ();
  test_format ();
  return unit_finish ();
}
