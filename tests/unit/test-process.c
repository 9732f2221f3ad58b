/* The container process's identity, limits and terminal.  Everything that
 * changes the process runs in a forked child that reports its failed checks
 * in its exit status; needs root for the identity and terminal parts. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "util/fdpass.h"
#include "core/process.h"
#include "core/terminal.h"
#include "sandrun/util.h"
#include "unit.h"

/* ---- helpers ------------------------------------------------------------- */

static int child_failed;

/* A check inside a child: a "#" diagnostic line, counted in the exit code. */
#define EXPECT(cond, ...)                                                      \
  do                                                                           \
    {                                                                          \
      if (!(cond))                                                             \
        {                                                                      \
          child_failed++;                                                      \
          printf ("#   child: ");                                              \
          printf (__VA_ARGS__);                                                \
          printf (" (%s:%d: %s)\n", __FILE__, __LINE__, #cond);                \
        }                                                                      \
    }                                                                          \
  while (0)

/* Run fn in a child; the status is its number of failed EXPECTs. */
static int
in_child (void (*fn) (void *), void *arg)
{
  pid_t pid;
  int status;

  fflush (stdout);
  pid = fork ();
  if (pid < 0)
    return -1;
  if (pid == 0)
    {
      child_failed = 0;
      fn (arg);
      fflush (stdout);
      _exit (child_failed > 100 ? 100 : child_failed);
    }
  if (waitpid (pid, &status, 0) != pid)
    return -1;
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

static bool
msg_has (sr_error *e, const char *sub)
{
  bool ok = e != NULL && strstr (e->msg, sub) != NULL;
  if (!ok)
    printf ("#   message: %s\n#   wanted:  %s\n", e ? e->msg : "(no error)",
            sub);
  return ok;
}

/* The value of "Key:\t..." in /proc/self/status, without trailing blanks. */
static char *
status_field (const char *key)
{
  _cleanup_fclose_ FILE *f = fopen ("/proc/self/status", "re");
  char line[512];
  size_t len = strlen (key);

  while (f != NULL && fgets (line, sizeof line, f) != NULL)
    if (strncmp (line, key, len) == 0 && line[len] == ':')
      {
        char *v = line + len + 1;
        v += strspn (v, " \t");
        size_t n = strcspn (v, "\n");
        /* "Groups:" ends with a space. */
        while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
          n--;
        return xstrndup (v, n);
      }
  return xstrdup ("");
}

static uint64_t
status_caps (const char *key)
{
  _cleanup_free_ char *v = status_field (key);
  return strtoull (v, NULL, 16);
}

static void
write_file (const char *path, const char *data, mode_t mode)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd >= 0)
    {
      sr_write_all (fd, data, strlen (data));
      close (fd);
      chmod (path, mode);
    }
}

static void
remove_tree (const char *path)
{
  _cleanup_free_ char *cmd = xasprintf ("rm -rf '%s'", path);
  if (system (cmd) != 0)
    printf ("# could not remove %s\n", path);
}

#define BIT(c) (UINT64_C (1) << (c))

/* ---- rlimits ------------------------------------------------------------- */

static void
test_rlimit_names (void)
{
  /* The name is the constant's own spelling: what the spec's type field is. */
#define RL(r) { #r, r }
  static const struct
  {
    const char *name;
    int value;
  } all[] = {
    RL (RLIMIT_AS),      RL (RLIMIT_CORE),   RL (RLIMIT_CPU),     RL (RLIMIT_DATA),
    RL (RLIMIT_FSIZE),   RL (RLIMIT_LOCKS),  RL (RLIMIT_MEMLOCK), RL (RLIMIT_MSGQUEUE),
    RL (RLIMIT_NICE),    RL (RLIMIT_NOFILE), RL (RLIMIT_NPROC),   RL (RLIMIT_RSS),
    RL (RLIMIT_RTPRIO),  RL (RLIMIT_RTTIME), RL (RLIMIT_SIGPENDING), RL (RLIMIT_STACK),
  };
#undef RL
  bool ok = true;

  for (size_t i = 0; i < ARRAY_SIZE (all); i++)
    ok = ok && sr_rlimit_from_name (all[i].name) == all[i].value;
  CHECK (ok, "every RLIMIT_* name maps to its resource");
  CHECK (sr_rlimit_from_name ("RLIMIT_FOO") == -1, "RLIMIT_FOO is unknown");
  CHECK (sr_rlimit_from_name ("nofile") == -1, "lower-case names are unknown");
  CHECK (sr_rlimit_from_name (NULL) == -1, "NULL is unknown");
}

static void
test_rlimit_errors (void)
{
  oci_rlimit bad[] = { { .type = "RLIMIT_NOFILE", .soft = 10, .hard = 20 },
                       { .type = "RLIMIT_FOO", .soft = 1, .hard = 1 } };
  oci_rlimit inverted = { .type = "RLIMIT_CORE", .soft = 20, .hard = 10 };
  oci_process p = { 0 };
  struct rlimit before, after;
  _cleanup_error_ sr_error *e1 = NULL;
  _cleanup_error_ sr_error *e2 = NULL;

  getrlimit (RLIMIT_NOFILE, &before);
  p.rlimits = bad;
  p.rlimits_len = 2;
  CHECK (sr_rlimits_apply (&p, &e1) < 0
             && msg_has (e1, "rlimit \"RLIMIT_FOO\": unknown"),
         "an unknown rlimit fails with its name");
  getrlimit (RLIMIT_NOFILE, &after);
  CHECK (before.rlim_cur == after.rlim_cur
             && before.rlim_max == after.rlim_max,
         "nothing is applied when one entry is invalid");

  p.rlimits = &inverted;
  p.rlimits_len = 1;
  CHECK (sr_rlimits_apply (&p, &e2) < 0
             && msg_has (e2, "RLIMIT_CORE: soft limit 20 is greater than "
                             "hard limit 10"),
         "soft > hard fails clearly");
}

static void
child_rlimits (void *arg)
{
  oci_rlimit set = { .type = "RLIMIT_NOFILE", .soft = 100, .hard = 200 };
  oci_rlimit raise = { .type = "RLIMIT_NOFILE", .soft = 1000, .hard = 1000 };
  oci_rlimit inf = { .type = "RLIMIT_CORE", .soft = 0, .hard = UINT64_MAX };
  oci_process p = { .rlimits = &set, .rlimits_len = 1 };
  oci_capabilities no_resource = { 0 };
  char *keep[] = { "CAP_SETPCAP", NULL };
  _cleanup_error_ sr_error *e = NULL;
  struct rlimit r;

  EXPECT (sr_rlimits_apply (&p, &e) == 0, "apply: %s", e ? e->msg : "");
  getrlimit (RLIMIT_NOFILE, &r);
  EXPECT (r.rlim_cur == 100 && r.rlim_max == 200, "nofile %lu/%lu",
          (unsigned long) r.rlim_cur, (unsigned long) r.rlim_max);

  /* "unlimited" is UINT64_MAX in the config, RLIM_INFINITY for the kernel
   * (only checkable where the hard limit is already unlimited). */
  p.rlimits = &inf;
  if (getrlimit (RLIMIT_CORE, &r) == 0 && r.rlim_max == RLIM_INFINITY)
    {
      EXPECT (sr_rlimits_apply (&p, &e) == 0, "unlimited: %s", e ? e->msg : "");
      getrlimit (RLIMIT_CORE, &r);
      EXPECT (r.rlim_cur == 0 && r.rlim_max == RLIM_INFINITY, "core 0/inf");
    }

  /* Without CAP_SYS_RESOURCE the hard limit cannot go back up. */
  no_resource.effective = no_resource.permitted = keep;
  EXPECT (sr_capabilities_apply (&no_resource, NULL, &e) == 0, "drop caps: %s",
          e ? e->msg : "");
  p.rlimits = &raise;
  EXPECT (sr_rlimits_apply (&p, &e) < 0 && e->errnum == EPERM
              && msg_has (e, "setrlimit RLIMIT_NOFILE (soft 1000, hard 1000): "
                             "Operation not permitted")
              && msg_has (e, "CAP_SYS_RESOURCE"),
          "raising the hard limit without CAP_SYS_RESOURCE");
}

static void
child_oom_score_adj (void *arg)
{
  oci_process p = { .oom_score_adj = { .set = true, .value = 500 } };
  _cleanup_error_ sr_error *e = NULL;
  _cleanup_free_ char *got = NULL;

  EXPECT (sr_oom_score_adj_apply (&p, &e) == 0, "apply: %s", e ? e->msg : "");
  sr_read_file_at (AT_FDCWD, "/proc/self/oom_score_adj", 64, &got, NULL, NULL);
  EXPECT (got != NULL && strcmp (got, "500\n") == 0, "oom_score_adj is %s",
          got ? got : "?");

  /* Going back down needs CAP_SYS_RESOURCE. */
  p.oom_score_adj.value = -500;
  if (!(status_caps ("CapEff") & BIT (24)))
    EXPECT (sr_oom_score_adj_apply (&p, &e) < 0
                && msg_has (e, "set oomScoreAdj to -500 (below the current "
                               "500: that needs CAP_SYS_RESOURCE)"),
            "lowering without CAP_SYS_RESOURCE");
  else
    EXPECT (sr_oom_score_adj_apply (&p, &e) == 0, "lower: %s", e ? e->msg : "");
}

static void
test_oom_score_adj (void)
{
  oci_process p = { .oom_score_adj = { .set = true, .value = -1001 } };
  oci_process unset = { 0 };
  _cleanup_error_ sr_error *e = NULL;

  CHECK (sr_oom_score_adj_apply (&p, &e) < 0
             && msg_has (e, "oomScoreAdj -1001 is outside -1000..1000"),
         "oomScoreAdj out of range");
  CHECK (sr_oom_score_adj_apply (&unset, NULL) == 0, "unset oomScoreAdj");
  CHECK (in_child (child_oom_score_adj, NULL) == 0,
         "oomScoreAdj is written to /proc/self/oom_score_adj");
}

/* ---- capabilities -------------------------------------------------------- */

static void
test_cap_names (void)
{
  CHECK (sr_cap_from_name ("CAP_CHOWN") == 0, "CAP_CHOWN is 0");
  CHECK (sr_cap_from_name ("CAP_SYS_ADMIN") == 21, "CAP_SYS_ADMIN is 21");
  CHECK (sr_cap_from_name ("CAP_AUDIT_READ") == 37, "CAP_AUDIT_READ is 37");
  CHECK (sr_cap_from_name ("CAP_FOO") == -1, "CAP_FOO is unknown");
  CHECK (sr_cap_from_name ("cap_chown") == -1, "names are upper case");
  CHECK (sr_cap_from_name (NULL) == -1, "NULL is unknown");
}

static void
test_cap_errors (void)
{
  char *malformed[] = { "CAP_CHOWN", "cap_kill", NULL };
  oci_capabilities bad = { .bounding = malformed };
  _cleanup_error_ sr_error *e = NULL;

  /* Fails before touching the process. */
  CHECK (sr_capabilities_apply (&bad, NULL, &e) < 0
             && msg_has (e, "capabilities.bounding: \"cap_kill\" is "
                            "not a capability name"),
         "a malformed capability name is an error");
}

/* runc's default spec lists ambient capabilities without inheritable ones:
 * they are not raised, and nothing else fails. */
static void
child_ambient_not_inheritable (void *arg)
{
  char *net[] = { "CAP_NET_BIND_SERVICE", NULL };
  char *none[] = { NULL };
  oci_capabilities caps = { .bounding = net,
                            .effective = net,
                            .permitted = net,
                            .inheritable = none,
                            .ambient = net };
  _cleanup_error_ sr_error *e = NULL;

  EXPECT (sr_capabilities_apply (&caps, NULL, &e) == 0, "apply: %s", e ? e->msg : "");
  EXPECT (status_caps ("CapPrm") == BIT (10), "CapPrm");
  EXPECT (status_caps ("CapInh") == 0, "CapInh");
  EXPECT (status_caps ("CapAmb") == 0, "CapAmb");
}

struct identity_case
{
  const char *cwd;
};

static void
child_identity (void *arg)
{
  const struct identity_case *c = arg;
  char *bounding[] = { "CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE",
                       "CAP_FROM_THE_FUTURE", NULL };
  char *eff[] = { "CAP_KILL", "CAP_NET_BIND_SERVICE", NULL };
  char *inh[] = { "CAP_NET_BIND_SERVICE", NULL };
  oci_capabilities caps = { .bounding = bounding,
                            .effective = eff,
                            .permitted = eff,
                            .inheritable = inh,
                            .ambient = inh };
  uint32_t gids[] = { 1001, 1002 };
  oci_process p = { .cwd = (char *) c->cwd, .capabilities = &caps };
  _cleanup_error_ sr_error *e = NULL;
  _cleanup_free_ char *uid = NULL, *gid = NULL, *groups = NULL;
  _cleanup_free_ char *cwd = NULL;
  mode_t mask;

  p.user.uid = 1000;
  p.user.gid = 1000;
  p.user.additional_gids = gids;
  p.user.additional_gids_len = 2;
  p.user.umask.set = true;
  p.user.umask.value = 027;
  if (sr_process_switch_identity (&p, NULL, &e) < 0)
    {
      EXPECT (false, "switch: %s", e->msg);
      return;
    }
  EXPECT (status_caps ("CapBnd") == (BIT (0) | BIT (5) | BIT (10)),
          "CapBnd %llx", (unsigned long long) status_caps ("CapBnd"));
  EXPECT (status_caps ("CapPrm") == (BIT (5) | BIT (10)), "CapPrm");
  EXPECT (status_caps ("CapEff") == (BIT (5) | BIT (10)), "CapEff");
  EXPECT (status_caps ("CapInh") == BIT (10), "CapInh");
  EXPECT (status_caps ("CapAmb") == BIT (10), "CapAmb");
  uid = status_field ("Uid");
  gid = status_field ("Gid");
  groups = status_field ("Groups");
  EXPECT (strcmp (uid, "1000\t1000\t1000\t1000") == 0, "Uid %s", uid);
  EXPECT (strcmp (gid, "1000\t1000\t1000\t1000") == 0, "Gid %s", gid);
  EXPECT (strcmp (groups, "1001 1002") == 0, "Groups %s", groups);
  mask = umask (0);
  EXPECT (mask == 027, "umask %o", (unsigned) mask);
  cwd = getcwd (NULL, 0);
  EXPECT (cwd != NULL && strcmp (cwd, c->cwd) == 0, "cwd %s", cwd ? cwd : "?");
  EXPECT (prctl (PR_GET_KEEPCAPS, 0, 0, 0, 0) == 0, "keepcaps is off");
}

static void
child_no_caps (void *arg)
{
  oci_process p = { .cwd = "/" };
  _cleanup_error_ sr_error *e = NULL;
  mode_t mask;

  EXPECT (sr_process_switch_identity (&p, NULL, &e) == 0, "switch: %s",
          e ? e->msg : "");
  EXPECT (status_caps ("CapBnd") == 0 && status_caps ("CapPrm") == 0
              && status_caps ("CapEff") == 0 && status_caps ("CapInh") == 0
              && status_caps ("CapAmb") == 0,
          "all sets empty");
  mask = umask (0);
  EXPECT (mask == 0022, "default umask %o", (unsigned) mask);
}

/* Kept for a seccomp load without no_new_privs: CAP_SYS_ADMIN effective
 * and permitted, in no set an execve passes on, until the late capset. */
static void
child_keep_admin (void *arg)
{
  char *kill_[] = { "CAP_KILL", NULL };
  char *none[] = { NULL };
  oci_capabilities caps = { .bounding = kill_, .effective = kill_, .permitted = kill_,
                            .inheritable = none, .ambient = none };
  oci_process p = { .cwd = "/", .capabilities = &caps };
  struct sr_caps_late late;
  _cleanup_error_ sr_error *e = NULL;

  p.user.uid = 1000;
  p.user.gid = 1000;
  if (sr_process_switch_identity (&p, &late, &e) < 0)
    {
      EXPECT (false, "switch: %s", e->msg);
      return;
    }
  EXPECT (late.pending, "CAP_SYS_ADMIN kept");
  EXPECT (status_caps ("CapEff") == (BIT (5) | BIT (21)), "CapEff before");
  EXPECT (status_caps ("CapPrm") == (BIT (5) | BIT (21)), "CapPrm before");
  EXPECT (status_caps ("CapBnd") == BIT (5) && status_caps ("CapInh") == 0
              && status_caps ("CapAmb") == 0,
          "bounding, inheritable, ambient exact before");
  EXPECT (sr_capabilities_apply_late (&late, &e) == 0, "late: %s", e ? e->msg : "");
  EXPECT (status_caps ("CapEff") == BIT (5) && status_caps ("CapPrm") == BIT (5),
          "CAP_SYS_ADMIN gone after");
}

static void
child_no_new_privs (void *arg)
{
  oci_process off = { 0 };
  oci_process on = { .no_new_privileges = true };
  _cleanup_error_ sr_error *e = NULL;

  EXPECT (sr_no_new_privs_apply (&off, &e) == 0, "off");
  EXPECT (prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0, "not set when off");
  EXPECT (sr_no_new_privs_apply (&on, &e) == 0, "on");
  EXPECT (prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1, "set when on");
}

static void
child_bad_cwd (void *arg)
{
  oci_process nope = { .cwd = "/nope" };
  oci_process rel = { .cwd = "tmp" };
  _cleanup_error_ sr_error *e1 = NULL;
  _cleanup_error_ sr_error *e2 = NULL;

  EXPECT (sr_process_switch_identity (&nope, NULL, &e1) < 0
              && msg_has (e1, "chdir \"/nope\": No such file or directory"),
          "missing cwd");
  EXPECT (sr_process_switch_identity (&rel, NULL, &e2) < 0
              && msg_has (e2, "not an absolute path"),
          "relative cwd");
}

/* A user namespace whose setgroups is "deny" (as rootless engines make
 * them): no additionalGids is fine, some is a clear error. */
static void
child_setgroups_denied (void *arg)
{
  uint32_t gids[] = { 0 };
  oci_process p = { .cwd = "/" };
  _cleanup_error_ sr_error *e = NULL;

  if (unshare (CLONE_NEWUSER) < 0)
    {
      printf ("# no user namespaces: %s\n", strerror (errno));
      return;
    }
  write_file ("/proc/self/setgroups", "deny", 0644);
  write_file ("/proc/self/uid_map", "0 0 1", 0644);
  write_file ("/proc/self/gid_map", "0 0 1", 0644);
  p.user.additional_gids = gids;
  p.user.additional_gids_len = 1;
  EXPECT (sr_process_switch_identity (&p, NULL, &e) < 0
              && msg_has (e, "setgroups [0] (setgroups is denied in this "
                             "user namespace): Operation not permitted"),
          "groups asked for where setgroups is denied");
  p.user.additional_gids_len = 0;
  sr_error_freep (&e);
  EXPECT (sr_process_switch_identity (&p, NULL, &e) == 0, "no groups: %s",
          e ? e->msg : "");
}

static void
test_identity (void)
{
  char dir[] = "/tmp/sandrun-test-process-XXXXXX";
  struct identity_case c;

  if (getuid () != 0)
    {
      printf ("# skipping the identity tests: not root\n");
      return;
    }
  if (mkdtemp (dir) == NULL)
    {
      CHECK (false, "mkdtemp");
      return;
    }
  /* 0700 root: only the early chdir (as root) gets in. */
  chmod (dir, 0700);
  c.cwd = dir;
  CHECK (in_child (child_identity, &c) == 0,
         "uid 1000 with a subset of capabilities: sets, ids, groups, umask, "
         "cwd");
  CHECK (in_child (child_no_caps, NULL) == 0,
         "NULL capabilities: every set empty, umask 0022");
  CHECK (in_child (child_ambient_not_inheritable, NULL) == 0,
         "an ambient capability that is not inheritable is not raised");
  CHECK (in_child (child_keep_admin, NULL) == 0,
         "CAP_SYS_ADMIN kept for a late seccomp load, dropped by one capset");
  CHECK (in_child (child_no_new_privs, NULL) == 0, "noNewPrivileges");
  CHECK (in_child (child_setgroups_denied, NULL) == 0,
         "setgroups denied in a user namespace");
  CHECK (in_child (child_bad_cwd, NULL) == 0, "cwd errors");
  CHECK (in_child (child_rlimits, NULL) == 0,
         "rlimits applied; raising a hard limit without CAP_SYS_RESOURCE");
  rmdir (dir);
}

/* ---- find_executable ----------------------------------------------------- */

static char *
find (char *arg0, char *path_env, sr_error **err)
{
  char *args[] = { arg0, NULL };
  char *env[] = { "HOME=/", path_env, NULL };
  oci_process p = { .args = args, .env = env };
  return sr_process_find_executable (&p, err);
}

static void
test_find_executable (void)
{
  char dir[] = "/tmp/sandrun-test-exe-XXXXXX";
  _cleanup_free_ char *a = NULL, *b = NULL, *path = NULL, *sub = NULL;
  _cleanup_free_ char *abs = NULL;
  oci_process empty = { 0 };
  char *no_args[] = { NULL };
  oci_process empty_args = { .args = no_args };
  sr_error *e = NULL;
  char *got;

  if (mkdtemp (dir) == NULL)
    {
      CHECK (false, "mkdtemp");
      return;
    }
  a = xasprintf ("%s/a", dir);
  b = xasprintf ("%s/b", dir);
  mkdir (a, 0755);
  mkdir (b, 0755);
  sub = xasprintf ("%s/tool", a);
  write_file (sub, "#!/bin/sh\n", 0755);
  free (sub);
  sub = xasprintf ("%s/data", a);
  write_file (sub, "not a program\n", 0644);
  free (sub);
  sub = xasprintf ("%s/data", b);
  write_file (sub, "#!/bin/sh\n", 0755);
  free (sub);
  sub = xasprintf ("%s/thing", a);
  mkdir (sub, 0755);
  free (sub);
  sub = xasprintf ("%s/thing", b);
  write_file (sub, "#!/bin/sh\n", 0755);
  path = xasprintf ("PATH=%s:%s", a, b);

  got = find ("tool", path, NULL);
  abs = xasprintf ("%s/tool", a);
  CHECK_STR (got, abs, "found in the first PATH directory");
  free (got);
  free (abs);
  got = find ("data", path, NULL);
  abs = xasprintf ("%s/data", b);
  CHECK_STR (got, abs, "a non-executable file is skipped");
  free (got);
  free (abs);
  got = find ("thing", path, NULL);
  CHECK_STR (got, sub, "a directory is skipped");
  free (got);

  got = find ("missing", path, &e);
  CHECK (got == NULL
             && msg_has (e, "exec \"missing\": executable file not found in "
                            "$PATH")
             && e->errnum == ENOENT,
         "not in PATH");
  sr_error_freep (&e);

  got = find ("sh", "NOTPATH=/x", NULL);
  CHECK (got != NULL && got[0] == '/' && strstr (got, "/sh") != NULL
             && access (got, X_OK) == 0,
         "the default PATH finds sh (%s)", got ? got : "none");
  free (got);

  got = find (sub, path, NULL);
  CHECK_STR (got, sub, "a path with a slash is used as is");
  free (got);

  got = find ("/bin/nope", path, &e);
  CHECK (got == NULL
             && msg_has (e, "exec \"/bin/nope\": no such file or directory"),
         "a missing absolute path");
  sr_error_freep (&e);

  abs = xasprintf ("%s/data", a);
  got = find (abs, path, &e);
  CHECK (got == NULL && e != NULL && e->errnum == EACCES,
         "a non-executable absolute path is refused");
  sr_error_freep (&e);
  free (abs);
  abs = NULL;

  got = sr_process_find_executable (&empty, &e);
  CHECK (got == NULL && msg_has (e, "process.args: empty"), "no args");
  sr_error_freep (&e);
  got = sr_process_find_executable (&empty_args, &e);
  CHECK (got == NULL && msg_has (e, "process.args: empty"), "empty args");
  sr_error_freep (&e);

  remove_tree (dir);
}

/* ---- environment --------------------------------------------------------- */

static const char *
env_value (char **env, const char *name)
{
  size_t len = strlen (name);
  for (size_t i = 0; env != NULL && env[i] != NULL; i++)
    if (strncmp (env[i], name, len) == 0 && env[i][len] == '=')
      return env[i] + len + 1;
  return NULL;
}

static void
child_env (void *arg)
{
  const char *root = arg;
  char *with_home[] = { "PATH=/bin", "HOME=/root", NULL };
  char *without[] = { "PATH=/bin", NULL };
  oci_process p = { .env = with_home };
  char **env;

  if (chroot (root) < 0 || chdir ("/") < 0)
    {
      EXPECT (false, "chroot: %s", strerror (errno));
      return;
    }
  env = sr_process_env (&p);
  EXPECT (strv_len (env) == 2 && str_eq (env_value (env, "HOME"), "/root"),
          "HOME kept");
  strv_free (env);

  p.env = without;
  p.user.uid = 1000;
  env = sr_process_env (&p);
  EXPECT (strv_len (env) == 2 && str_eq (env_value (env, "PATH"), "/bin")
              && str_eq (env_value (env, "HOME"), "/home/user"),
          "HOME from /etc/passwd");
  strv_free (env);

  p.user.uid = 4242;
  env = sr_process_env (&p);
  EXPECT (str_eq (env_value (env, "HOME"), "/"), "HOME / for an unknown uid");
  strv_free (env);

  /* A FIFO as /etc/passwd must not block. */
  unlink ("/etc/passwd");
  mkfifo ("/etc/passwd", 0644);
  p.user.uid = 1000;
  p.env = NULL;
  env = sr_process_env (&p);
  EXPECT (strv_len (env) == 1 && str_eq (env_value (env, "HOME"), "/"),
          "HOME / when /etc/passwd is a FIFO");
  strv_free (env);
}

static void
test_env (void)
{
  char root[] = "/tmp/sandrun-test-env-XXXXXX";
  _cleanup_free_ char *etc = NULL, *passwd = NULL;

  if (getuid () != 0 || mkdtemp (root) == NULL)
    {
      printf ("# skipping the HOME tests: not root\n");
      return;
    }
  etc = xasprintf ("%s/etc", root);
  passwd = xasprintf ("%s/etc/passwd", root);
  mkdir (etc, 0755);
  write_file (passwd,
              "root:x:0:0:root:/root:/bin/sh\n"
              "broken line\n"
              "nohome:x:1001:1001::\n"
              "user:x:1000:1000:A User:/home/user:/bin/sh\n",
              0644);
  CHECK (in_child (child_env, root) == 0,
         "sr_process_env adds HOME as runc does");
  remove_tree (root);
}

/* ---- fds ----------------------------------------------------------------- */

static void
child_cloexec (void *arg)
{
  _cleanup_error_ sr_error *e = NULL;
  int fd = open ("/dev/null", O_RDONLY);
  int high = fcntl (fd, F_DUPFD, 50);

  EXPECT (sr_fds_cloexec_from (3, &e) == 0, "cloexec: %s", e ? e->msg : "");
  EXPECT (fcntl (fd, F_GETFD) & FD_CLOEXEC, "fd %d", fd);
  EXPECT (fcntl (high, F_GETFD) & FD_CLOEXEC, "fd %d", high);
  EXPECT (!(fcntl (2, F_GETFD) & FD_CLOEXEC), "stderr untouched");
}

/* ---- terminal ------------------------------------------------------------ */

struct term_case
{
  int sock;
  bool bind;
  const char *root; /* for bind: a private root to chroot into */
};

static void
check_tty_stdio (void)
{
  struct winsize ws = { 0 };

  EXPECT (isatty (0) && isatty (1) && isatty (2), "stdio is a tty");
  EXPECT (getsid (0) == getpid (), "a new session");
  EXPECT (tcgetpgrp (0) == getpgrp (), "the pty is the controlling tty");
  EXPECT (ioctl (0, TIOCGWINSZ, &ws) == 0 && ws.ws_row == 24 && ws.ws_col == 80,
          "console size %ux%u", ws.ws_col, ws.ws_row);
}

/* A root with its own devpts and a /dev/console file, in a private mount
 * namespace: the bind over /dev/console never reaches the host. */
static int
enter_private_root (const char *root)
{
  _cleanup_free_ char *dev = xasprintf ("%s/dev", root);
  _cleanup_free_ char *pts = xasprintf ("%s/dev/pts", root);
  _cleanup_free_ char *ptmx = xasprintf ("%s/dev/ptmx", root);

  if (unshare (CLONE_NEWNS) < 0
      || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0
      || mount ("tmpfs", root, "tmpfs", 0, "mode=0755") < 0
      || mkdir (dev, 0755) < 0 || mkdir (pts, 0755) < 0
      || mount ("devpts", pts, "devpts", 0, "newinstance,ptmxmode=0666") < 0
      || symlink ("pts/ptmx", ptmx) < 0 || chroot (root) < 0 || chdir ("/") < 0)
    return -1;
  return 0;
}

static void
child_terminal (void *arg)
{
  struct term_case *c = arg;
  oci_console_size size = { .height = 24, .width = 80 };
  oci_process p = { .terminal = true, .console_size = &size };
  _cleanup_error_ sr_error *e = NULL;
  int err_fd = dup (2);
  FILE *out;

  if (c->root != NULL && enter_private_root (c->root) < 0)
    {
      EXPECT (false, "private root: %s", strerror (errno));
      return;
    }
  if (c->root != NULL && c->bind)
    write_file ("/dev/console", "", 0600);
  if (sr_terminal_setup (&p, c->sock, c->bind, &e) < 0)
    {
      dprintf (err_fd, "#   child: terminal: %s\n", e->msg);
      _exit (99);
    }
  /* stdout is the pty now: report through the saved stderr. */
  out = fdopen (err_fd, "w");
  if (out != NULL)
    stdout = out;
  check_tty_stdio ();
  if (c->bind)
    {
      struct stat con, in;
      EXPECT (stat ("/dev/console", &con) == 0 && fstat (0, &in) == 0
                  && con.st_rdev == in.st_rdev,
              "/dev/console is the pty");
    }
  dprintf (0, "hello\n");
}

static void
child_console_symlink (void *arg)
{
  struct term_case *c = arg;
  oci_process p = { .terminal = true };
  _cleanup_error_ sr_error *e = NULL;

  if (enter_private_root (c->root) < 0)
    {
      EXPECT (false, "private root: %s", strerror (errno));
      return;
    }
  symlink ("/proc/sys/kernel/core_pattern", "/dev/console");
  EXPECT (sr_terminal_setup (&p, c->sock, true, &e) < 0
              && msg_has (e, "/dev/console is a symlink"),
          "a /dev/console symlink is refused");
}

/* Run the terminal child against one end of a socketpair and check what
 * arrives on the other: the master, its name, the child's output. */
static void
terminal_case (const char *what, struct term_case *c)
{
  int sv[2];
  char name[64] = "";
  char out[64] = "";
  _cleanup_error_ sr_error *e = NULL;
  _cleanup_close_ int master = -1;
  int status, ptn;

  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    {
      CHECK (false, "socketpair");
      return;
    }
  c->sock = sv[1];
  status = in_child (child_terminal, c);
  close (sv[1]);
  master = sr_recv_fd (sv[0], name, sizeof name - 1, &e);
  close (sv[0]);
  CHECK (status == 0, "%s: the child's stdio is the pty (status %d)", what,
         status);
  CHECK (master >= 0 && ioctl (master, TIOCGPTN, &ptn) == 0,
         "%s: a pty master arrives on the console socket", what);
  CHECK_STR (name, "/dev/ptmx", "%s: with the master's name as payload", what);
  if (master >= 0)
    {
      ssize_t n = read (master, out, sizeof out - 1);
      out[n > 0 ? n : 0] = '\0';
    }
  CHECK_STR (out, "hello\r\n",
             "%s: the child's output comes out of the "
             "master",
             what);
}

static void
test_terminal (void)
{
  char root[] = "/tmp/sandrun-test-tty-XXXXXX";
  struct term_case plain = { .bind = false };
  struct term_case bind = { .bind = true };
  struct term_case link = { 0 };
  int sv[2];

  terminal_case ("host devpts", &plain);
  if (getuid () != 0 || mkdtemp (root) == NULL)
    {
      printf ("# skipping /dev/console tests: not root\n");
      return;
    }
  bind.root = root;
  terminal_case ("private devpts, bound to /dev/console", &bind);

  link.root = root;
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0)
    {
      link.sock = sv[1];
      CHECK (in_child (child_console_symlink, &link) == 0,
             "a symlinked /dev/console is refused (CVE-2025-52565)");
      close (sv[0]);
      close (sv[1]);
    }
  rmdir (root);
}

int
main (void)
{
  test_rlimit_names ();
  test_rlimit_errors ();
  test_oom_score_adj ();
  test_cap_names ();
  test_cap_errors ();
  test_identity ();
  test_find_executable ();
  test_env ();
  CHECK (in_child (child_cloexec, NULL) == 0,
         "sr_fds_cloexec_from marks fds >= 3 close-on-exec");
  test_terminal ();
  return unit_finish ();
}
