/* The error type, the small helpers of util.h, and fd hygiene. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandrun/error.h"
#include "util/mountinfo.h"
#include "sandrun/util.h"
#include "unit.h"

static int
fail_with_context (sr_error **err)
{
  sr_fail (err, ENOENT, "mount \"%s\"", "/proc");
  return sr_wrap (err, "create \"%s\"", "web");
}

static void
test_errors (void)
{
  sr_error *err = NULL;

  CHECK (fail_with_context (&err) == -1, "sr_fail and sr_wrap return -1");
  CHECK_STR (err ? err->msg : NULL, "create \"web\": mount \"/proc\": No such file or directory",
             "context is prefixed, the errno text appended once");
  CHECK (sr_error_errno (err) == ENOENT, "the errno of the cause is kept");
  sr_error_freep (&err);
  CHECK (err == NULL, "sr_error_freep clears the pointer");

  sr_fail (&err, 0, "first");
  sr_fail (&err, EPERM, "second");
  CHECK_STR (err ? err->msg : NULL, "first", "a second failure keeps the first cause");
  CHECK (sr_error_errno (err) == EIO, "an error without errno reports EIO");
  sr_error_freep (&err);

  CHECK (sr_fail (NULL, EPERM, "nobody listens") == -1, "a NULL error pointer is allowed");
  CHECK (sr_wrap (&err, "no error yet") == -1 && err == NULL, "wrapping nothing creates nothing");
}

static void
test_strings (void)
{
  _cleanup_strv_ char **v = NULL;

  CHECK (strv_len (NULL) == 0, "the length of a NULL vector is 0");
  strv_append (&v, "a");
  strv_append (&v, "b");
  CHECK (strv_len (v) == 2 && strcmp (v[1], "b") == 0 && v[2] == NULL, "strv_append");
  _cleanup_strv_ char **d = strv_dup (v);
  CHECK (d != v && strv_len (d) == 2 && strcmp (d[0], "a") == 0, "strv_dup copies");
  CHECK (str_has_prefix ("HOME=/root", "HOME=") && !str_has_prefix ("HOM", "HOME="), "str_has_prefix");
  CHECK (str_eq (NULL, NULL) && !str_eq ("a", NULL) && str_eq ("a", "a"), "str_eq is NULL-safe");

  long l;
  unsigned long long u;
  CHECK (sr_parse_long ("-42", &l) == 0 && l == -42, "sr_parse_long");
  CHECK (sr_parse_long ("42x", &l) < 0 && sr_parse_long ("", &l) < 0, "trailing junk and empty are refused");
  CHECK (sr_parse_long ("99999999999999999999", &l) < 0, "overflow is refused");
  CHECK (sr_parse_u64 ("18446744073709551615", &u) == 0 && u == UINT64_MAX, "the whole u64 range");
  CHECK (sr_parse_u64 ("-1", &u) < 0, "a negative u64 is refused");
}

static void
test_files (void)
{
  char dir[] = "/tmp/sandrun-test-util.XXXXXX";
  sr_error *err = NULL;
  char *data = NULL;
  size_t len = 0;

  if (mkdtemp (dir) == NULL)
    {
      CHECK (0, "mkdtemp");
      return;
    }
  _cleanup_close_ int dfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  int fd = openat (dfd, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  CHECK (fd >= 0 && sr_write_all (fd, "hello", 5) == 5, "sr_write_all");
  sr_close (fd);

  CHECK (sr_read_file_at (dfd, "f", 64, &data, &len, &err) == 0 && len == 5
             && strcmp (data, "hello") == 0,
         "sr_read_file_at reads a whole file, NUL-terminated");
  free (data);
  data = NULL;
  CHECK (sr_read_file_at (dfd, "f", 4, &data, &len, &err) < 0 && sr_error_errno (err) == EFBIG,
         "a file over the limit is EFBIG");
  sr_error_freep (&err);
  CHECK (sr_read_file_at (dfd, "missing", 64, &data, &len, &err) < 0
             && strstr (err->msg, "open \"missing\"") != NULL,
         "a missing file names the path");
  sr_error_freep (&err);
  CHECK (sr_write_file_at (dfd, "f", "bye", 3, &err) == 0, "sr_write_file_at writes an existing file");
  CHECK (sr_write_file_at (dfd, "nope", "x", 1, &err) < 0, "sr_write_file_at does not create");
  sr_error_freep (&err);

  unlinkat (dfd, "f", 0);
  rmdir (dir);
}

static bool
fd_open (int fd)
{
  return fcntl (fd, F_GETFD) >= 0;
}

static void
test_close_fds_except (void)
{
  int fds[6];
  for (int i = 0; i < 6; i++)
    fds[i] = open ("/dev/null", O_RDONLY);
  int keep[] = { fds[1], -1, fds[4] };

  sr_close_fds_except (fds[0], keep, 3);
  CHECK (!fd_open (fds[0]) && fd_open (fds[1]) && !fd_open (fds[2]) && !fd_open (fds[3])
             && fd_open (fds[4]) && !fd_open (fds[5]),
         "sr_close_fds_except closes the gaps and keeps what it is told");
  CHECK (fd_open (0) && fd_open (1) && fd_open (2), "fds below `first` stay");
  sr_close (fds[1]);
  sr_close (fds[4]);
}

/* The one mountinfo parser: escapes decoded, optional fields skipped. */
static void
test_mountinfo (void)
{
  char line[] = "36 35 98:0 /a\\134b /mnt/with\\040space rw,noatime shared:1 "
                "master:2 - ext3 /dev/root\\011x rw,errors=continue";
  struct sr_mountinfo m;
  CHECK (sr_mountinfo_parse (line, &m), "a line with optional fields parses");
  CHECK_STR (m.root, "/a\\b", "root: \\134 is a backslash");
  CHECK_STR (m.point, "/mnt/with space", "mount point: \\040 is a space");
  CHECK_STR (m.source, "/dev/root\tx", "source: \\011 is a tab");
  CHECK_STR (m.opts, "rw,noatime", "mount options");
  CHECK_STR (m.fstype, "ext3", "filesystem type");
  CHECK_STR (m.superopts, "rw,errors=continue", "superblock options");
  char bare[] = "25 1 0:22 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup "
                "rw,cpu,cpuacct";
  CHECK (sr_mountinfo_parse (bare, &m) && strcmp (m.fstype, "cgroup") == 0
             && sr_mountinfo_has_opt (m.superopts, "cpuacct")
             && !sr_mountinfo_has_opt (m.superopts, "cpuac")
             && !sr_mountinfo_has_opt (m.superopts, "pu"),
         "no optional fields; whole options only");
  char cut[] = "25 1 0:22 / /x rw - cgroup";
  CHECK (!sr_mountinfo_parse (cut, &m), "a line cut short is refused");
  char nodash[] = "25 1 0:22 / /x rw shared:1 cgroup cgroup rw";
  CHECK (!sr_mountinfo_parse (nodash, &m), "a line without \" - \" is refused");
}

int
main (void)
{
  test_mountinfo ();
  test_errors ();
  test_strings ();
  test_files ();
  test_close_fds_except ();
  return unit_finish ();
}
