/* seccomp: profiles are prepared in this process (as the runtime's parent
 * does) and loaded in forked children (as the init does), which then probe
 * harmless syscalls and report through their exit status. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "core/seccomp_internal.h"
#include "oci-spec/oci-spec.h"
#include "util/fdpass.h"
#include "core/seccomp.h"
#include "sandrun/util.h"
#include "unit.h"

static char tmpdir[] = "/tmp/sr-test-seccomp-XXXXXX";

/* ---- helpers ---- */

static oci_seccomp *
parse (const char *json)
{
  sr_error *err = NULL;
  oci_seccomp *p = oci_seccomp_parse_data (json, strlen (json), &err);
  if (p == NULL)
    {
      printf ("# parse: %s\n", err->msg);
      sr_error_free (err);
    }
  return p;
}

/* prepare's error message for a profile (malloc'd), or NULL on success. */
static char *
prepare_error (const char *json)
{
  oci_seccomp *p = parse (json);
  sr_seccomp_prog *prog = NULL;
  sr_error *err = NULL;
  char *msg = NULL;

  if (p == NULL)
    return xstrdup ("(parse failed)");
  if (sr_seccomp_prepare (p, NULL, &prog, &err) < 0)
    {
      msg = xstrdup (err->msg);
      sr_error_free (err);
    }
  sr_seccomp_prog_free (prog);
  oci_seccomp_free (p);
  return msg;
}

/* The probe a child runs once the filter is in place: its return value is
 * the child's exit code (0: as expected). */
typedef int (*probe_fn) (int notify_fd);

/* Load `prog` in a child and run `probe`; returns the wait status. */
static int
run_loaded (const sr_seccomp_prog *prog, probe_fn probe)
{
  int status;
  pid_t pid;

  fflush (stdout);
  pid = fork ();
  if (pid == 0)
    {
      sr_error *err = NULL;
      int notify_fd = -1;
      if (sr_seccomp_load (prog, &notify_fd, &err) < 0)
        {
          printf ("# load: %s\n", err->msg);
          fflush (stdout);
          _exit (120);
        }
      _exit (probe (notify_fd));
    }
  if (pid < 0 || waitpid (pid, &status, 0) != pid)
    return -1;
  return status;
}

/* Prepare `json` (with `cache_dir`, may be NULL) and run `probe` under it. */
static int
run_profile (const char *json, const char *cache_dir, probe_fn probe)
{
  oci_seccomp *p = parse (json);
  sr_seccomp_prog *prog = NULL;
  sr_error *err = NULL;
  int status = -1;

  if (p != NULL && sr_seccomp_prepare (p, cache_dir, &prog, &err) < 0)
    {
      printf ("# prepare: %s\n", err->msg);
      sr_error_free (err);
    }
  else if (p != NULL)
    status = run_loaded (prog, probe);
  sr_seccomp_prog_free (prog);
  oci_seccomp_free (p);
  return status;
}

static bool
exited_ok (int status)
{
  if (status != -1 && WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return true;
  printf ("# child status 0x%x\n", (unsigned) status);
  return false;
}

static bool
killed_by (int status, int sig)
{
  if (status != -1 && WIFSIGNALED (status) && WTERMSIG (status) == sig)
    return true;
  printf ("# child status 0x%x\n", (unsigned) status);
  return false;
}

/* -1 with errno `e`: the marker of a matched ERRNO rule. */
static bool
failed_with (long ret, int e)
{
  return ret == -1 && errno == e;
}

/* ---- SHA-256 ---- */

static bool
sha_is (const char *data, size_t len, const char *hex)
{
  uint8_t out[32];
  char got[65];
  sr_sha256 (data, len, out);
  sr_seccomp_cache_name (out, got);
  return strcmp (got, hex) == 0;
}

static void
test_sha256 (void)
{
  size_t big = 1000000;
  _cleanup_free_ char *a = xmalloc (big);
  sr_sha256_ctx c;
  uint8_t out[32];
  char hex[65];
  size_t i;

  memset (a, 'a', big);
  CHECK (sha_is ("", 0,
                 "e3b0c44298fc1c149afbf4c8996fb924"
                 "27ae41e4649b934ca495991b7852b855"),
         "sha256 of empty input");
  CHECK (sha_is ("abc", 3,
                 "ba7816bf8f01cfea414140de5dae2223"
                 "b00361a396177a9cb410ff61f20015ad"),
         "sha256 of abc");
  CHECK (sha_is ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                 56,
                 "248d6a61d20638b8e5c026930c3e6039"
                 "a33ce45964ff2167f6ecedd419db06c1"),
         "sha256 of the two-block vector");
  CHECK (sha_is (a, big,
                 "cdc76e5c9914fb9281a1c7e284d73e67"
                 "f1809a48a497200e046d39ccc7112cd0"),
         "sha256 of a million a");
  /* Byte-by-byte updates give the same digest. */
  sr_sha256_init (&c);
  for (i = 0; i < 1000; i++)
    sr_sha256_update (&c, a, 1);
  sr_sha256_final (&c, out);
  sr_seccomp_cache_name (out, hex);
  CHECK (sha_is (a, 1000, hex), "sha256 incremental updates");
}

/* ---- actions ---- */

static int
probe_getpgid_errno_42 (int fd)
{
  return failed_with (getpgid (0), 42) && getpid () > 0 ? 0 : 1;
}

static int
probe_getpgid_eperm (int fd)
{
  return failed_with (getpgid (0), EPERM) ? 0 : 1;
}

static int
probe_getpgid_runs (int fd)
{
  getpgid (0);
  return 0; /* reached only if not killed */
}

static void
test_actions (void)
{
  CHECK (exited_ok (run_profile (
             "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":"
             "[\"getpgid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":42}]}",
             NULL, probe_getpgid_errno_42)),
         "SCMP_ACT_ERRNO with errnoRet 42");
  CHECK (exited_ok (run_profile (
             "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":"
             "[\"getpgid\"],\"action\":\"SCMP_ACT_ERRNO\"}]}",
             NULL, probe_getpgid_eperm)),
         "SCMP_ACT_ERRNO defaults to EPERM");
  CHECK (exited_ok (run_profile (
             "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":42,"
             /* What a sanitizer runtime needs on the way out, too. */
             "\"syscalls\":[{\"names\":[\"getpid\",\"exit_group\",\"exit\","
             "\"sigaltstack\",\"gettid\",\"write\",\"mmap\",\"munmap\"],"
             "\"action\":\"SCMP_ACT_ALLOW\"}]}",
             NULL, probe_getpgid_errno_42)),
         "defaultErrnoRet");
  CHECK (killed_by (run_profile (
                        "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{"
                        "\"names\":[\"getpgid\"],\"action\":\"SCMP_ACT_KILL_"
                        "PROCESS\"}]}",
                        NULL, probe_getpgid_runs),
                    SIGSYS),
         "SCMP_ACT_KILL_PROCESS kills with SIGSYS");
  CHECK (killed_by (run_profile (
                        "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{"
                        "\"names\":[\"getpgid\"],\"action\":\"SCMP_ACT_KILL\"}"
                        "]}",
                        NULL, probe_getpgid_runs),
                    SIGSYS),
         "SCMP_ACT_KILL kills the (only) thread");
  CHECK (killed_by (run_profile (
                        "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{"
                        "\"names\":[\"getpgid\"],\"action\":\"SCMP_ACT_TRAP\"}"
                        "]}",
                        NULL, probe_getpgid_runs),
                    SIGSYS),
         "SCMP_ACT_TRAP raises SIGSYS");
  CHECK (exited_ok (run_profile (
             "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":"
             "[\"getpgid\"],\"action\":\"SCMP_ACT_LOG\"}]}",
             NULL, probe_getpgid_runs)),
         "SCMP_ACT_LOG allows");
  /* No tracer: the kernel fails the syscall with ENOSYS. */
  CHECK (exited_ok (run_profile (
             "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":"
             "[\"getpgid\"],\"action\":\"SCMP_ACT_TRACE\"}]}",
             NULL, probe_getpgid_runs)),
         "SCMP_ACT_TRACE without a tracer");
  CHECK (exited_ok (run_profile (
             "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":"
             "[\"no_such_syscall_xyz\",\"getpgid\"],"
             "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":42}]}",
             NULL, probe_getpgid_errno_42)),
         "unknown syscall names are skipped");
  CHECK (exited_ok (run_profile (
             "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
             "{\"names\":[\"getpid\"],\"action\":\"SCMP_ACT_ALLOW\"},"
             "{\"names\":[\"getpgid\"],\"action\":\"SCMP_ACT_ERRNO\","
             "\"errnoRet\":42}]}",
             NULL, probe_getpgid_errno_42)),
         "a rule with the default action is skipped");
}

/* ---- arguments ---- */

static int
probe_masked (int fd)
{
  /* (pid & 0xff00) == 0x1200 */
  int bad = 0;
  bad += !failed_with (syscall (SYS_getpgid, 0x1234), 43);
  bad += !failed_with (syscall (SYS_getpgid, 0x12ff), 43);
  bad += failed_with (syscall (SYS_getpgid, 0x1334), 43);
  bad += failed_with (syscall (SYS_getpgid, 0), 43);
  return bad;
}

static int
probe_same_index_or (int fd)
{
  int bad = 0;
  bad += !failed_with (syscall (SYS_getpgid, 999995), 43);
  bad += !failed_with (syscall (SYS_getpgid, 999997), 43);
  bad += failed_with (syscall (SYS_getpgid, 999996), 43);
  return bad;
}

static int
probe_two_index_and (int fd)
{
  int bad = 0;
  bad += !failed_with (syscall (SYS_kill, 999995, 0), 43);
  bad += failed_with (syscall (SYS_kill, 999995, SIGCONT), 43);
  bad += failed_with (syscall (SYS_kill, 999996, 0), 43);
  return bad;
}

/* For each operator against 1000: which of 999, 1000, 1001 match. */
static const struct
{
  const char *op;
  bool match[3];
} op_cases[] = {
  { "SCMP_CMP_NE", { true, false, true } },
  { "SCMP_CMP_LT", { true, false, false } },
  { "SCMP_CMP_LE", { true, true, false } },
  { "SCMP_CMP_EQ", { false, true, false } },
  { "SCMP_CMP_GE", { false, true, true } },
  { "SCMP_CMP_GT", { false, false, true } },
};
static size_t op_case;

static int
probe_op (int fd)
{
  int bad = 0, i;
  for (i = 0; i < 3; i++)
    {
      bool hit = failed_with (syscall (SYS_getpgid, 999 + i), 43);
      bad += hit != op_cases[op_case].match[i];
    }
  return bad;
}

static void
test_args (void)
{
  CHECK (exited_ok (run_profile (
             "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":"
             "[\"getpgid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":43,"
             "\"args\":[{\"index\":0,\"value\":65280,\"valueTwo\":4608,"
             "\"op\":\"SCMP_CMP_MASKED_EQ\"}]}]}",
             NULL, probe_masked)),
         "SCMP_CMP_MASKED_EQ: (arg & value) == valueTwo");
  CHECK (exited_ok (run_profile (
             "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":"
             "[\"getpgid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":43,"
             "\"args\":[{\"index\":0,\"value\":999995,\"op\":\"SCMP_CMP_EQ\"},"
             "{\"index\":0,\"value\":999997,\"op\":\"SCMP_CMP_EQ\"}]}]}",
             NULL, probe_same_index_or)),
         "args on the same index are ORed (one rule each, as runc)");
  CHECK (exited_ok (run_profile (
             "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":"
             "[\"kill\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":43,"
             "\"args\":[{\"index\":0,\"value\":999995,\"op\":\"SCMP_CMP_EQ\"},"
             "{\"index\":1,\"value\":0,\"op\":\"SCMP_CMP_EQ\"}]}]}",
             NULL, probe_two_index_and)),
         "args on different indexes are ANDed");
  for (op_case = 0; op_case < ARRAY_SIZE (op_cases); op_case++)
    {
      _cleanup_free_ char *json = xasprintf (
          "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":"
          "[\"getpgid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":43,"
          "\"args\":[{\"index\":0,\"value\":1000,\"op\":\"%s\"}]}]}",
          op_cases[op_case].op);
      CHECK (exited_ok (run_profile (json, NULL, probe_op)), "operator %s",
             op_cases[op_case].op);
    }
}

/* ---- errors ---- */

static void
check_error (const char *json, const char *want)
{
  _cleanup_free_ char *msg = prepare_error (json);
  CHECK_STR (msg, want, "error: %s", want);
}

static void
test_errors (void)
{
  sr_seccomp_prog *prog = (sr_seccomp_prog *) 1;
  int fd = 5;

  check_error ("{\"defaultAction\":\"SCMP_ACT_FOO\"}",
               "seccomp: unknown action \"SCMP_ACT_FOO\"");
  check_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\""
               ":[\"getpid\"],\"action\":\"SCMP_ACT_BAR\"}]}",
               "seccomp: unknown action \"SCMP_ACT_BAR\"");
  check_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\""
               ":[\"getpid\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{"
               "\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_ALMOST\"}]}]}",
               "seccomp: unknown operator \"SCMP_CMP_ALMOST\"");
  check_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\""
               ":[\"getpid\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{"
               "\"index\":6,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}]}",
               "seccomp: argument index 6 out of range");
  check_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\","
               "\"flags\":[\"SECCOMP_FILTER_FLAG_FAST\"]}",
               "seccomp: unknown flag \"SECCOMP_FILTER_FLAG_FAST\"");
  check_error ("{\"defaultAction\":\"SCMP_ACT_NOTIFY\"}",
               "seccomp: SCMP_ACT_NOTIFY cannot be the default action");
  check_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\""
               ":[\"read\",\"write\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}",
               "seccomp: SCMP_ACT_NOTIFY cannot be used for the write "
               "syscall");
  check_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\""
               ":[\"sendmsg\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}",
               "seccomp: SCMP_ACT_NOTIFY cannot be used for the sendmsg "
               "syscall");
  check_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\","
               "\"architectures\":[\"x86_64\"]}",
               "seccomp: unknown architecture \"x86_64\"");
  check_error ("{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":"
               "70000}",
               "seccomp: errnoRet 70000 out of range");

  CHECK (sr_seccomp_prepare (NULL, NULL, &prog, NULL) == 0 && prog == NULL,
         "no profile: nothing to prepare");
  CHECK (sr_seccomp_load (NULL, &fd, NULL) == 0 && fd == -1,
         "no program: nothing to load");
  CHECK (prepare_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\","
                        "\"architectures\":[\"SCMP_ARCH_X86_64\","
                        "\"SCMP_ARCH_X86\",\"SCMP_ARCH_X32\","
                        "\"SCMP_ARCH_AARCH64\",\"SCMP_ARCH_ARM\"],"
                        "\"flags\":[\"SECCOMP_FILTER_FLAG_TSYNC\","
                        "\"SECCOMP_FILTER_FLAG_LOG\","
                        "\"SECCOMP_FILTER_FLAG_SPEC_ALLOW\"]}")
             == NULL,
         "all architectures and the flags that need no listener accepted");
  check_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\","
               "\"flags\":[\"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV\"]}",
               "seccomp: the flag SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV needs an "
               "SCMP_ACT_NOTIFY rule");
}

/* ---- flags ---- */

static void
test_flags (void)
{
  CHECK (exited_ok (run_profile (
             "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"flags\":["
             "\"SECCOMP_FILTER_FLAG_TSYNC\",\"SECCOMP_FILTER_FLAG_LOG\","
             "\"SECCOMP_FILTER_FLAG_SPEC_ALLOW\"],\"syscalls\":[{\"names\":"
             "[\"getpgid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":42}]}",
             NULL, probe_getpgid_errno_42)),
         "TSYNC, LOG and SPEC_ALLOW load");
}

/* ---- the cache ---- */

static const char cache_profile[]
    = "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":"
      "[\"getpgid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":42}]}";
static const char other_profile[]
    = "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":"
      "[\"getpgid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":77}]}";

static int
probe_getpgid_errno_77 (int fd)
{
  return failed_with (getpgid (0), 77) ? 0 : 1;
}

static sr_seccomp_prog *
prepare_json (const char *json, const char *cache_dir)
{
  oci_seccomp *p = parse (json);
  sr_seccomp_prog *prog = NULL;
  sr_error *err = NULL;

  if (p != NULL && sr_seccomp_prepare (p, cache_dir, &prog, &err) < 0)
    sr_error_free (err);
  oci_seccomp_free (p);
  return prog;
}

static char *
entry_path (const char *cache_dir, const char *json)
{
  oci_seccomp *p = parse (json);
  uint8_t key[SR_SECCOMP_KEY_LEN];
  char name[2 * SR_SECCOMP_KEY_LEN + 1];

  sr_seccomp_cache_key (p, key);
  oci_seccomp_free (p);
  sr_seccomp_cache_name (key, name);
  return xasprintf ("%s/%s", cache_dir, name);
}

static void
test_cache (void)
{
  _cleanup_free_ char *dir = xasprintf ("%s/cache", tmpdir);
  _cleanup_free_ char *entry = entry_path (dir, cache_profile);
  sr_seccomp_prog *first, *second, *other;
  struct stat st;
  int fd;

  first = prepare_json (cache_profile, dir);
  CHECK (first != NULL && stat (entry, &st) == 0 && S_ISREG (st.st_mode)
             && (st.st_mode & 07777) == 0600,
         "first prepare writes the cache entry, mode 0600");
  second = prepare_json (cache_profile, dir);
  CHECK (second != NULL && second->len == first->len
             && memcmp (second->insns, first->insns,
                        first->len * sizeof *first->insns)
                    == 0,
         "second prepare returns the same program");
  CHECK (exited_ok (run_loaded (second, probe_getpgid_errno_42)),
         "the cached program behaves identically");

  /* Plant another program under the first profile's key: a prepare that
   * uses it proves that the cache, not libseccomp, produced the program. */
  other = prepare_json (other_profile, NULL);
  {
    oci_seccomp *p = parse (cache_profile);
    uint8_t key[SR_SECCOMP_KEY_LEN];
    sr_seccomp_cache_key (p, key);
    oci_seccomp_free (p);
    sr_seccomp_cache_store (dir, key, other->insns, other->len);
  }
  sr_seccomp_prog_free (second);
  second = prepare_json (cache_profile, dir);
  CHECK (exited_ok (run_loaded (second, probe_getpgid_errno_77)),
         "a cache hit does not recompile");

  /* Corrupt the entry: ignored, recompiled and rewritten. */
  fd = open (entry, O_WRONLY | O_CLOEXEC);
  if (fd >= 0)
    {
      CHECK (pwrite (fd, "\xff\xff\xff\xff", 4, st.st_size - 4) == 4,
             "corrupt the entry");
      close (fd);
    }
  sr_seccomp_prog_free (second);
  second = prepare_json (cache_profile, dir);
  CHECK (exited_ok (run_loaded (second, probe_getpgid_errno_42)),
         "a corrupt entry is ignored");
  {
    struct sock_filter *insns = NULL;
    size_t len = 0;
    oci_seccomp *p = parse (cache_profile);
    uint8_t key[SR_SECCOMP_KEY_LEN];
    sr_seccomp_cache_key (p, key);
    oci_seccomp_free (p);
    CHECK (sr_seccomp_cache_load (dir, key, &insns, &len) == 0
               && len == first->len,
           "a corrupt entry is rewritten");
    free (insns);
  }
  if (truncate (entry, 10) == 0)
    {
      sr_seccomp_prog_free (second);
      second = prepare_json (cache_profile, dir);
      CHECK (exited_ok (run_loaded (second, probe_getpgid_errno_42)),
             "a short entry is ignored");
    }

  sr_seccomp_prog_free (first);
  sr_seccomp_prog_free (second);
  sr_seccomp_prog_free (other);
}

/* ---- user notification ---- */

/* A supervisor: answer one notification with 4242. */
static int
respond_once (int notify_fd)
{
  struct seccomp_notif req;
  struct seccomp_notif_resp resp;

  memset (&req, 0, sizeof req);
  if (ioctl (notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
    return 1;
  memset (&resp, 0, sizeof resp);
  resp.id = req.id;
  resp.val = 4242;
  return ioctl (notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 ? 2 : 0;
}

static int
probe_notify (int notify_fd)
{
  int status;
  long r;
  pid_t sup;

  if (notify_fd < 0)
    return 10;
  sup = fork ();
  if (sup == 0)
    _exit (respond_once (notify_fd));
  r = syscall (SYS_getpgid, 0);
  if (waitpid (sup, &status, 0) != sup || !WIFEXITED (status)
      || WEXITSTATUS (status) != 0)
    return 11;
  return r == 4242 ? 0 : 12;
}

static void
test_notify (void)
{
  CHECK (exited_ok (run_profile (
             "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":"
             "[\"getpgid\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}",
             NULL, probe_notify)),
         "SCMP_ACT_NOTIFY gives a working listener fd");
  CHECK (exited_ok (
             run_profile ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"flags\":["
                          "\"SECCOMP_FILTER_FLAG_TSYNC\","
                          "\"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV\"],"
                          "\"syscalls\":[{\"names\":[\"getpgid\"],"
                          "\"action\":\"SCMP_ACT_NOTIFY\"}]}",
                          NULL, probe_notify)),
         "SCMP_ACT_NOTIFY with TSYNC and WAIT_KILLABLE_RECV");
}

static void
test_send_to_listener (void)
{
  _cleanup_free_ char *path = xasprintf ("%s/agent.sock", tmpdir);
  _cleanup_close_ int srv = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  _cleanup_close_ int conn = -1, passed = -1;
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  _cleanup_free_ char *json = xasprintf (
      "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"%s\","
      "\"listenerMetadata\":\"MKNOD=/dev/null\",\"syscalls\":[{\"names\":"
      "[\"getpgid\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}",
      path);
  oci_seccomp *p = parse (json);
  const char *state = "{\"ociVersion\":\"1.0.2\",\"id\":\"ctr\","
                      "\"status\":\"creating\",\"pid\":4422,\"bundle\":"
                      "\"/b\",\"annotations\":{\"a\":\"x\\\"y\"}}";
  char buf[4096] = { 0 }, errbuf[128];
  int devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  sr_error *err = NULL;
  yajl_val tree;

  strcpy (addr.sun_path, path);
  if (bind (srv, (struct sockaddr *) &addr, sizeof addr) < 0
      || listen (srv, 1) < 0)
    abort ();
  /* The connection completes against the backlog: no second process. */
  CHECK (sr_seccomp_send_to_listener (p, devnull, 0, state, &err) == 0,
         "send to listener (%s)", err ? err->msg : "ok");
  sr_error_free (err);
  close (devnull);
  conn = accept4 (srv, NULL, NULL, SOCK_CLOEXEC);
  passed = sr_recv_fd (conn, buf, sizeof buf - 1, NULL);
  CHECK (passed >= 0, "the listener receives an fd");

  tree = yajl_tree_parse (buf, errbuf, sizeof errbuf);
  {
    const char *ver[] = { "ociVersion", NULL }, *fds[] = { "fds", NULL };
    const char *pid[] = { "pid", NULL }, *meta[] = { "metadata", NULL };
    const char *id[] = { "state", "id", NULL };
    const char *ann[] = { "state", "annotations", "a", NULL };
    yajl_val f = tree ? yajl_tree_get (tree, fds, yajl_t_array) : NULL;

    CHECK (tree != NULL, "payload is JSON: %s", buf);
    CHECK (tree && YAJL_IS_STRING (yajl_tree_get (tree, ver, yajl_t_string)),
           "payload has ociVersion");
    CHECK (f != NULL && f->u.array.len == 1
               && str_eq (YAJL_GET_STRING (f->u.array.values[0]), "seccompFd"),
           "fds is [\"seccompFd\"]");
    CHECK (tree
               && YAJL_GET_INTEGER (yajl_tree_get (tree, pid, yajl_t_number))
                      == 4422,
           "pid is the container's");
    CHECK (tree
               && str_eq (
                   YAJL_GET_STRING (yajl_tree_get (tree, meta, yajl_t_string)),
                   "MKNOD=/dev/null"),
           "metadata is listenerMetadata");
    CHECK (tree
               && str_eq (
                   YAJL_GET_STRING (yajl_tree_get (tree, id, yajl_t_string)),
                   "ctr"),
           "state is embedded");
    CHECK (tree
               && str_eq (
                   YAJL_GET_STRING (yajl_tree_get (tree, ann, yajl_t_string)),
                   "x\"y"),
           "state strings survive re-encoding");
  }
  if (tree)
    yajl_tree_free (tree);

  err = NULL;
  CHECK (sr_seccomp_send_to_listener (p, 0, 0, "{\"id\":\"x\"}", &err) < 0,
         "a state without pid is refused");
  sr_error_free (err);
  free (p->listener_path);
  p->listener_path = NULL;
  err = NULL;
  CHECK (sr_seccomp_send_to_listener (p, 0, 0, state, &err) < 0 && err
             && strstr (err->msg, "listenerPath") != NULL,
         "no listenerPath is an error");
  sr_error_free (err);
  oci_seccomp_free (p);
  unlink (path);
}

/* ---- foreign architectures ---- */

#ifdef __x86_64__
/* getpid through the i386 entry point: eax = 20. */
static long
int80_getpid (void)
{
  long ret;
  __asm__ volatile ("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
  return ret;
}

static int
probe_int80_works (int fd)
{
  return int80_getpid () == getpid () ? 0 : 1;
}

static int
probe_int80_eperm (int fd)
{
  return int80_getpid () == -EPERM ? 0 : 1;
}

static int
probe_x32_getpid (int fd)
{
  /* __X32_SYSCALL_BIT | x86_64 getpid: killed, or ENOSYS without x32
   * support in the kernel; never a pid. */
  long r = syscall (0x40000000L | SYS_getpid);
  return r > 0 ? 1 : 0;
}

static void
test_foreign_arches (void)
{
  static const char only_x86_64[]
      = "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":"
        "[\"SCMP_ARCH_X86_64\"],\"syscalls\":[{\"names\":[\"getpid\"],"
        "\"action\":\"SCMP_ACT_ERRNO\"}]}";
  static const char with_x86[]
      = "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":"
        "[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_X86\"],\"syscalls\":[{\"names\":"
        "[\"getpid\"],\"action\":\"SCMP_ACT_ERRNO\"}]}";
  int status;

  status = run_loaded (NULL, probe_int80_works);
  if (status == -1 || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      CHECK (1, "# SKIP int 0x80 unavailable (no ia32 emulation)");
      return;
    }
  CHECK (
      killed_by (run_profile (only_x86_64, NULL, probe_int80_works), SIGSYS),
      "i386 int 0x80 under an x86_64-only filter is killed");
  CHECK (killed_by (run_profile ("{\"defaultAction\":\"SCMP_ACT_ALLOW\","
                                 "\"syscalls\":[{\"names\":[\"getpid\"],"
                                 "\"action\":\"SCMP_ACT_ERRNO\"}]}",
                                 NULL, probe_int80_works),
                    SIGSYS),
         "i386 int 0x80 without architectures is killed");
  CHECK (exited_ok (run_profile (with_x86, NULL, probe_int80_eperm)),
         "with SCMP_ARCH_X86 the i386 rule applies");
  status = run_profile (only_x86_64, NULL, probe_x32_getpid);
  CHECK ((status != -1 && WIFSIGNALED (status) && WTERMSIG (status) == SIGSYS)
             || exited_ok (status),
         "x32 syscalls do not get through");
}
#endif

/* ---- the default profile ---- */

static int
probe_default_profile (int fd)
{
  int bad = 0, status;
  pid_t pid;

  bad += getpid () <= 0;
  /* Harmless even if allowed: the target does not exist. */
  bad += !failed_with (mount ("none", "/nonexistent-sr-test", "tmpfs", 0, NULL),
                       EPERM);
  bad += !failed_with (unshare (CLONE_NEWUSER), EPERM);
  bad += !failed_with (unshare (CLONE_NEWNS), EPERM);
  bad += !failed_with (syscall (SYS_keyctl, 0, 0, 0, 0, 0), EPERM);
  bad += !failed_with (syscall (SYS_bpf, 0, 0, 0), EPERM);
  bad += !failed_with (syscall (SYS_ptrace, 0, 0, 0, 0), EPERM);
  /* READ_IMPLIES_EXEC is not among the allowed personalities. */
  bad += syscall (SYS_personality, 0x0400000) != -1;
  bad += syscall (SYS_personality, 0xffffffffUL) < 0;
  /* Numbers the profile does not know behave like an older kernel. */
  bad += !failed_with (syscall (1000), ENOSYS);
  /* An ordinary program runs. */
  pid = fork ();
  if (pid == 0)
    {
      char *argv[] = { "sh", "-c", "exec >/dev/null; ls / && cat /proc/self/status", NULL };
      char *env[] = { "PATH=/usr/bin:/bin", NULL };
      execve ("/bin/sh", argv, env);
      _exit (127);
    }
  bad += pid < 0 || waitpid (pid, &status, 0) != pid || !WIFEXITED (status)
         || WEXITSTATUS (status) != 0;
  return bad;
}

static void
test_default_profile (void)
{
  _cleanup_free_ char *path
      = xasprintf ("%s/contrib/seccomp/default.json", SR_TOP_SRCDIR);
  _cleanup_free_ char *data = NULL;
  sr_error *err = NULL;
  size_t len;
  int status;

  if (sr_read_file_at (AT_FDCWD, path, 1 << 20, &data, &len, &err) < 0)
    {
      CHECK (0, "read %s: %s", path, err->msg);
      sr_error_free (err);
      return;
    }
  status = run_profile (data, NULL, probe_default_profile);
  CHECK (exited_ok (status),
         "contrib/seccomp/default.json: normal syscalls "
         "work, dangerous ones fail with EPERM, unknown "
         "ones with ENOSYS (%d failed)",
         WIFEXITED (status) ? WEXITSTATUS (status) : -1);
}

int
main (void)
{
  _cleanup_free_ char *rm = NULL;

  if (mkdtemp (tmpdir) == NULL)
    return 1;
  test_sha256 ();
  test_actions ();
  test_args ();
  test_errors ();
  test_flags ();
  test_cache ();
  test_notify ();
  test_send_to_listener ();
#ifdef __x86_64__
  test_foreign_arches ();
#endif
  test_default_profile ();

  rm = xasprintf ("rm -rf '%s'", tmpdir);
  if (system (rm) != 0)
    CHECK (0, "cleanup of %s", tmpdir);
  return unit_finish ();
}
