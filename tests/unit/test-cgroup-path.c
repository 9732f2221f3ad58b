/* cgroup path handling: cgroupsPath validation, placement in each
 * hierarchy, the recorded form, and parsing what the host mounts. */
#include <stdlib.h>

#include "../../src/core/cgroup/internal.h"
#include "sandrun/util.h"
#include "unit.h"

static char *
norm (const char *id, const char *path)
{
  char *out = NULL;
  sr_error *err = NULL;
  if (sr_cg_normalize (id, path, &out, &err) < 0)
    {
      char *msg = xasprintf ("ERR %s", err->msg);
      sr_error_free (err);
      return msg;
    }
  return out;
}

static void
test_normalize (void)
{
  struct { const char *id, *path, *want; } cases[] = {
    { "web", NULL, "web" },
    { "web", "", "web" },
    { "web", "/default/web", "/default/web" },
    { "web", "//default/./web/", "/default/web" },
    { "web", "docker/web", "docker/web" },
    { "web", "./x", "x" },
    { "web", "/a:b:c", "/a:b:c" },
  };
  for (size_t i = 0; i < ARRAY_SIZE (cases); i++)
    {
      _cleanup_free_ char *got = norm (cases[i].id, cases[i].path);
      CHECK_STR (got, cases[i].want, "normalize %s", cases[i].path ? cases[i].path : "(null)");
    }
  const char *bad[] = { "/a/../b", "..", "/", "//.", "a\nb", "a;b",
                        "system.slice:docker:abc" };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    {
      _cleanup_free_ char *got = norm ("web", bad[i]);
      CHECK (str_has_prefix (got, "ERR "), "refuse cgroupsPath #%zu: %s", i, got);
    }
  _cleanup_free_ char *sd = norm ("web", "system.slice:docker:abc");
  CHECK (strstr (sd, "needs --systemd-cgroup") != NULL,
         "systemd form says why: %s", sd);
  const char *bad_ids[] = { "", "a/b", "..", "." };
  for (size_t i = 0; i < ARRAY_SIZE (bad_ids); i++)
    {
      _cleanup_free_ char *got = norm (bad_ids[i], NULL);
      CHECK (str_has_prefix (got, "ERR "), "refuse id \"%s\"", bad_ids[i]);
    }
}

static void
test_resolve (void)
{
  struct { const char *own; bool v2; const char *in, *want; } cases[] = {
    { "/user.slice/s.scope", false, "/abs/x", "/abs/x" },
    { "/user.slice/s.scope", true, "/abs/x", "/abs/x" },
    { "/", false, "web", "/web" },
    { "/process_api/h", false, "web", "/process_api/h/web" },
    { "/user.slice/s.scope", true, "web", "/user.slice/web" },
    { "/", true, "a/web", "/a/web" },
    { "/top", true, "web", "/web" },
  };
  for (size_t i = 0; i < ARRAY_SIZE (cases); i++)
    {
      _cleanup_free_ char *got = sr_cg_resolve (cases[i].own, cases[i].v2, cases[i].in);
      CHECK_STR (got, cases[i].want, "resolve %s in %s (v2=%d)", cases[i].in,
                 cases[i].own, cases[i].v2);
    }
}

static void
test_record (void)
{
  struct sr_cg_hier h[4] = {
    { .key = "cpu,cpuacct", .path = "/web" },
    { .key = "memory", .path = "/p/h/web" },
    { .key = "name=systemd", .path = "/web" },
    { .key = "", .path = "/web" },
  };
  _cleanup_free_ char *rec = sr_cg_record_format (h, 4);
  CHECK_STR (rec, "/web;memory:/p/h/web", "record with one differing hierarchy");
  _cleanup_free_ char *rec1 = sr_cg_record_format (h, 1);
  CHECK_STR (rec1, "/web", "uniform record is the plain path");

  struct { const char *rec, *key, *want; } cases[] = {
    { "/web;memory:/p/h/web", "memory", "/p/h/web" },
    { "/web;memory:/p/h/web", "cpu,cpuacct", "/web" },
    { "/web;:/u/web", "", "/u/web" },
    { "/a:b/web", "", "/a:b/web" },
    { "/web;name=systemd:/s/web", "name=systemd", "/s/web" },
  };
  for (size_t i = 0; i < ARRAY_SIZE (cases); i++)
    {
      char *got = NULL;
      sr_error *err = NULL;
      int r = sr_cg_record_lookup (cases[i].rec, cases[i].key, &got, &err);
      CHECK (r == 0, "lookup %s in %s", cases[i].key, cases[i].rec);
      CHECK_STR (got, cases[i].want, "lookup %s in %s gives", cases[i].key, cases[i].rec);
      free (got);
      sr_error_free (err);
    }
  const char *bad[] = { "", "web", "/web;memory", "/web;memory:rel" };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    {
      char *got = NULL;
      sr_error *err = NULL;
      CHECK (sr_cg_record_lookup (bad[i], "memory", &got, &err) < 0,
             "refuse record \"%s\"", bad[i]);
      free (got);
      sr_error_free (err);
    }
}

static const char hybrid_cgroup[] =
  "9:name=systemd:/\n"
  "8:pids:/\n"
  "4:memory:/process_api/abc\n"
  "2:cpu,cpuacct:/\n"
  "3:net_cls:/\n"
  "0::/\n";

static const char hybrid_mountinfo[] =
  "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
  "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
  "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
  "36 31 0:33 /process_api /mnt/mem\\040x rw - cgroup cgroup rw,memory\n"
  "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime shared:5 - cgroup cgroup rw,pids\n"
  "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
  "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static void
free_hiers (struct sr_cg_hier *h, size_t n)
{
  for (size_t i = 0; i < n; i++)
    sr_cg_hier_clear (&h[i]);
  free (h);
}

static void
test_parse (void)
{
  struct sr_cg_hier *h = NULL;
  size_t n = 0;
  sr_error *err = NULL;
  int r = sr_cg_hier_parse (SR_CGROUP_HYBRID, hybrid_cgroup, hybrid_mountinfo,
                            &h, &n, &err);
  CHECK (r == 0 && n == 5, "hybrid: 5 hierarchies (net_cls not mounted), got %zu", n);
  if (r == 0 && n == 5)
    {
      CHECK_STR (h[0].mnt, "/sys/fs/cgroup/systemd", "named hierarchy mount");
      CHECK (h[0].ctrls == 0, "named hierarchy has no controller");
      CHECK_STR (h[2].key, "memory", "memory key");
      CHECK_STR (h[2].mnt, "/sys/fs/cgroup/memory", "standard mount preferred");
      CHECK_STR (h[2].own, "/process_api/abc", "own memory cgroup");
      CHECK (h[3].ctrls == (SR_CG_BIT (SR_CG_CPU) | SR_CG_BIT (SR_CG_CPUACCT)),
             "co-mounted cpu,cpuacct");
      CHECK (h[4].v2 && strcmp (h[4].mnt, "/sys/fs/cgroup/unified") == 0,
             "unified hierarchy");
    }
  free_hiers (h, n);
  sr_error_free (err);

  /* A mount of a sub-tree (as in a container without cgroupns). */
  static const char sub_cgroup[] = "4:memory:/process_api/abc/inner\n";
  static const char sub_mi[] =
    "36 31 0:33 /process_api /mnt/mem\\040x rw - cgroup cgroup rw,memory\n";
  h = NULL;
  err = NULL;
  r = sr_cg_hier_parse (SR_CGROUP_V1, sub_cgroup, sub_mi, &h, &n, &err);
  CHECK (r == 0 && n == 1, "sub-tree mount found");
  if (r == 0 && n == 1)
    {
      CHECK_STR (h[0].mnt, "/mnt/mem x", "mount point unescaped");
      CHECK_STR (h[0].own, "/abc/inner", "own cgroup below the mount root");
    }
  free_hiers (h, n);
  sr_error_free (err);

  h = NULL;
  err = NULL;
  r = sr_cg_hier_parse (SR_CGROUP_V2, "0::/user.slice/x.scope\n", NULL, &h, &n, &err);
  CHECK (r == 0 && n == 1 && h[0].v2, "pure v2: one hierarchy");
  if (r == 0)
    CHECK_STR (h[0].own, "/user.slice/x.scope", "pure v2 own cgroup");
  free_hiers (h, n);
  sr_error_free (err);

  h = NULL;
  err = NULL;
  r = sr_cg_hier_parse (SR_CGROUP_V1, "0::/\n", "", &h, &n, &err);
  CHECK (r < 0, "no usable hierarchy is an error");
  sr_error_free (err);
}

static void
test_ctrls (void)
{
  CHECK (sr_cg_ctrls_parse ("cpu io memory", " ", true)
             == (SR_CG_BIT (SR_CG_CPU) | SR_CG_BIT (SR_CG_BLKIO) | SR_CG_BIT (SR_CG_MEMORY)),
         "v2 controller list");
  CHECK (sr_cg_ctrls_parse ("io", ",", false) == 0, "no \"io\" on v1");
  CHECK (sr_cg_ctrls_parse ("blkio", ",", true) == 0, "no \"blkio\" on v2");
  CHECK (sr_cg_ctrls_parse ("name=systemd", ",", false) == 0, "named hierarchy");
}

int
main (void)
{
  test_normalize ();
  test_resolve ();
  test_record ();
  test_parse ();
  test_ctrls ();
  return unit_finish ();
}
