/* safepath + procfs: a hostile tree under a mkdtemp dir, resolved with
 * openat2 and then with the forced user-space fallback.  Needs root (mounts,
 * namespaces) for the procfs part; cleans up everything it made. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <seccomp.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/procfs.h"
#include "util/safepath.h"
#include "sandrun/util.h"
#include "unit.h"

static char base[] = "/tmp/sr-safepath-XXXXXX";

static void
write_file (const char *path, const char *text)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || write (fd, text, strlen (text)) != (ssize_t) strlen (text))
    {
      perror (path);
      exit (2);
    }
  close (fd);
}

static void
mkdir_p (const char *path)
{
  char *copy = xstrdup (path);
  for (char *p = copy + 1; *p; p++)
    if (*p == '/')
      {
        *p = '\0';
        mkdir (copy, 0755);
        *p = '/';
      }
  mkdir (copy, 0755);
  free (copy);
}

static void
symlink_or_die (const char *target, const char *path)
{
  if (symlink (target, path) < 0)
    {
      perror (path);
      exit (2);
    }
}

/* What an fd reads, "" on any failure; closes the fd. */
static char *
slurp (int fd)
{
  char buf[256];
  ssize_t n = fd >= 0 ? read (fd, buf, sizeof buf - 1) : -1;
  sr_close (fd);
  buf[n > 0 ? n : 0] = '\0';
  return xstrdup (buf);
}

static bool
exists (const char *path)
{
  struct stat st;
  return lstat (path, &st) == 0;
}

/* Open and read, or "ERR:<errno>". */
static char *
read_in_root (int rootfd, const char *path, int flags)
{
  sr_error *err = NULL;
  int fd = sr_open_in_root (rootfd, path, O_RDONLY | flags, 0, &err);
  if (fd < 0)
    {
      char *r = xasprintf ("ERR:%d", sr_error_errno (err));
      sr_error_free (err);
      return r;
    }
  return slurp (fd);
}

static int
errno_of (int fd, sr_error *err)
{
  int e = fd >= 0 ? 0 : sr_error_errno (err);
  sr_close (fd);
  sr_error_free (err);
  return e;
}

/* errno_of once: its value is both checked and printed. */
#define CHECK_ERRNO(fd, err, want, ...)                                       \
  do                                                                          \
    {                                                                         \
      int got_ = errno_of ((fd), (err));                                      \
      CHECK (got_ == (want), __VA_ARGS__);                                    \
      if (got_ != (want))                                                     \
        printf ("#   errno %d, want %d\n", got_, (want));                     \
    }                                                                         \
  while (0)

/* The tree: `outside` (host, "host" content) mirrored inside the root at the
 * same absolute path ("inside"), so that a link followed on the host reads
 * differently from one resolved in the root. */
struct tree
{
  char *dir, *root, *outside, *mirror;
  int rootfd;
};

static void
build_tree (struct tree *t, const char *name)
{
  t->dir = xasprintf ("%s/%s", base, name);
  t->root = xasprintf ("%s/root", t->dir);
  t->outside = xasprintf ("%s/outside", t->dir);
  t->mirror = xasprintf ("%s%s", t->root, t->outside);

  mkdir_p (t->outside);
  mkdir_p (t->mirror);
  char *p = xasprintf ("%s/secret", t->outside);
  write_file (p, "host");
  free (p);
  p = xasprintf ("%s/secret", t->mirror);
  write_file (p, "inside");
  free (p);
  p = xasprintf ("%s/etc", t->root);
  mkdir_p (p);
  free (p);
  p = xasprintf ("%s/etc/hostname", t->root);
  write_file (p, "inside-hostname");
  free (p);

  struct
  {
    const char *name;
    char *target;
  } links[] = {
    { "escape_abs", xstrdup (t->outside) },
    { "escape_rel", xasprintf ("../../../../../../../..%s", t->outside) },
    { "up", xstrdup ("../../../..") },
    { "loop1", xstrdup ("loop2") },
    { "loop2", xstrdup ("loop1") },
    { "lastlink", xstrdup ("etc/hostname") },
    { "passwd_link", xstrdup ("/etc/passwd") },
    { "dirlink", xasprintf ("%s", t->outside) },
    { "dangling", xasprintf ("%s/newdir", t->dir) },
    { "etc/self", xstrdup ("/etc") },
  };
  for (size_t i = 0; i < ARRAY_SIZE (links); i++)
    {
      p = xasprintf ("%s/%s", t->root, links[i].name);
      symlink_or_die (links[i].target, p);
      free (p);
      free (links[i].target);
    }
  /* l0 -> l1 -> ... -> l40 -> etc: 41 links from l0, 40 from l1. */
  for (int i = 0; i <= 40; i++)
    {
      char *target = i == 40 ? xstrdup ("etc") : xasprintf ("l%d", i + 1);
      p = xasprintf ("%s/l%d", t->root, i);
      symlink_or_die (target, p);
      free (p);
      free (target);
    }

  t->rootfd = open (t->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (t->rootfd < 0)
    exit (2);
}

static void
free_tree (struct tree *t)
{
  close (t->rootfd);
  free (t->dir);
  free (t->root);
  free (t->outside);
  free (t->mirror);
}

/* The call (fd, err: consumed) made `in_rel` (relative to the tree's dir)
 * inside the root, and `host_rel` does not exist outside it. */
static void
check_landed (const struct tree *t, int fd, sr_error *err, const char *in_rel,
              const char *host_rel, const char *mode, const char *what)
{
  char *in = xasprintf ("%s%s/%s", t->root, t->dir, in_rel);
  char *host = xasprintf ("%s/%s", t->dir, host_rel);
  CHECK (fd >= 0 && exists (in) && !exists (host), "%s: %s", mode, what);
  free (in);
  free (host);
  errno_of (fd, err);
}

static const struct
{
  const char *path;
  int flags;
  const char *want; /* content, or "ERR:<errno>" */
  const char *what;
} read_cases[] = {
  { "etc/hostname", 0, "inside-hostname", "plain relative path" },
  { "/etc/hostname", 0, "inside-hostname", "leading slash" },
  { "../../../../etc/hostname", 0, "inside-hostname", "\"..\" clamped at the root" },
  { "escape_abs/secret", 0, "inside", "absolute symlink resolved in root" },
  { "escape_rel/secret", 0, "inside", "relative symlink with \"..\" clamped" },
  { "up/up/etc/hostname", 0, "inside-hostname", "symlink to \"../../..\"" },
  { "etc/self/self/self/hostname", 0, "inside-hostname", "absolute link inside a subdir" },
  { "loop1", 0, "ERR:40", "symlink loop is ELOOP" },
  { "l1/hostname", 0, "inside-hostname", "40 links are fine" },
  { "l0/hostname", 0, "ERR:40", "41 links are ELOOP" },
  { "lastlink", 0, "inside-hostname", "symlink as last component" },
  { "lastlink", O_NOFOLLOW, "ERR:40", "last symlink with O_NOFOLLOW" },
  { "etc/self/hostname", O_NOFOLLOW, "inside-hostname", "O_NOFOLLOW spares the middle links" },
  { "etc/hostname/", 0, "ERR:20", "trailing slash on a file" },
  { "etc/nothere", 0, "ERR:2", "missing file" },
  { "", 0, "ERR:2", "empty path" },
};

static void
test_open (struct tree *t, const char *mode)
{
  for (size_t i = 0; i < ARRAY_SIZE (read_cases); i++)
    {
      char *s = read_in_root (t->rootfd, read_cases[i].path, read_cases[i].flags);
      CHECK_STR (s, read_cases[i].want, "%s: %s", mode, read_cases[i].what);
      free (s);
    }

  struct stat st;
  sr_error *err = NULL;
  int fd = sr_open_in_root (t->rootfd, "etc/self", O_RDONLY | O_DIRECTORY, 0, &err);
  CHECK (fd >= 0 && fstat (fd, &st) == 0 && S_ISDIR (st.st_mode),
         "%s: O_DIRECTORY through a last link to a dir", mode);
  errno_of (fd, err);
  err = NULL;
  fd = sr_open_in_root (t->rootfd, "lastlink", O_PATH, 0, &err);
  CHECK (fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode),
         "%s: O_PATH follows a last link", mode);
  errno_of (fd, err);
  err = NULL;
  fd = sr_open_in_root (t->rootfd, "lastlink", O_WRONLY | O_CREAT | O_EXCL, 0644,
                        &err);
  CHECK_ERRNO (fd, err, EEXIST, "%s: O_CREAT|O_EXCL on a link is EEXIST", mode);

  err = NULL;
  fd = sr_open_in_root (t->rootfd, "lastlink", O_PATH | O_NOFOLLOW, 0, &err);
  CHECK (fd >= 0 && fstat (fd, &st) == 0 && S_ISLNK (st.st_mode),
         "%s: O_PATH|O_NOFOLLOW gives the link itself", mode);
  CHECK (fd < 0 || (fcntl (fd, F_GETFD) & FD_CLOEXEC), "%s: O_CLOEXEC", mode);
  errno_of (fd, err);

  err = NULL;
  fd = sr_open_in_root (t->rootfd, "/", O_PATH | O_DIRECTORY, 0, &err);
  char *path = fd >= 0 ? sr_fd_path (fd) : NULL;
  CHECK_STR (path, t->root, "%s: \"/\" is the root", mode);
  free (path);
  errno_of (fd, err);

  err = NULL;
  fd = sr_open_in_root (t->rootfd, "escape_abs/created", O_WRONLY | O_CREAT, 0600,
                        &err);
  check_landed (t, fd, err, "outside/created", "outside/created", mode,
                "O_CREAT through a link creates inside root");
}

static void
test_mkdir (struct tree *t, const char *mode)
{
  sr_error *err = NULL;
  int fd = sr_mkdir_in_root (t->rootfd, "dirlink/made/deeper", 0755, &err);
  char *in = xasprintf ("%s/made/deeper", t->mirror);
  char *path = fd >= 0 ? sr_fd_path (fd) : NULL;
  CHECK_STR (path, in, "%s: mkdir returns the last directory", mode);
  free (path);
  free (in);
  check_landed (t, fd, err, "outside/made/deeper", "outside/made", mode,
                "mkdir through an absolute link lands in root");

  err = NULL;
  fd = sr_mkdir_in_root (t->rootfd, "up/up/fresh/a/../b", 0700, &err);
  in = xasprintf ("%s/fresh/b", t->root);
  path = fd >= 0 ? sr_fd_path (fd) : NULL;
  CHECK_STR (path, in, "%s: mkdir through \"../..\" links and \"..\"", mode);
  free (path);
  free (in);
  errno_of (fd, err);

  err = NULL;
  fd = sr_mkdir_in_root (t->rootfd, "dangling/sub", 0755, &err);
  check_landed (t, fd, err, "newdir/sub", "newdir", mode,
                "mkdir through a dangling link creates its target in root");

  char deep[200] = "deep";
  for (int i = 0; i < 39; i++)
    strcat (deep, "/d");
  err = NULL;
  fd = sr_mkdir_in_root (t->rootfd, deep, 0755, &err);
  in = xasprintf ("%s/%s", t->root, deep);
  path = fd >= 0 ? sr_fd_path (fd) : NULL;
  CHECK_STR (path, in, "%s: mkdir 40 levels deep", mode);
  free (path);
  free (in);
  errno_of (fd, err);

  err = NULL;
  fd = sr_mkdir_in_root (t->rootfd, "etc/hostname/x", 0755, &err);
  CHECK_ERRNO (fd, err, ENOTDIR, "%s: mkdir below a file is ENOTDIR",
         mode);
  err = NULL;
  fd = sr_mkdir_in_root (t->rootfd, "loop1/x", 0755, &err);
  CHECK_ERRNO (fd, err, ELOOP, "%s: mkdir through a loop is ELOOP",
         mode);
}

static void
test_ensure (struct tree *t, const char *mode)
{
  struct stat before, after;
  stat ("/etc/passwd", &before);

  sr_error *err = NULL;
  int fd = sr_ensure_target_in_root (t->rootfd, "passwd_link", false, 0644, &err);
  char *in = xasprintf ("%s/etc/passwd", t->root);
  struct stat st;
  CHECK (fd >= 0 && stat (in, &st) == 0 && S_ISREG (st.st_mode) && st.st_size == 0,
         "%s: file target behind a link to /etc/passwd made in root", mode);
  stat ("/etc/passwd", &after);
  CHECK (before.st_ino == after.st_ino && before.st_size == after.st_size
             && before.st_mtime == after.st_mtime,
         "%s: host /etc/passwd untouched", mode);
  char *path = fd >= 0 ? sr_fd_path (fd) : NULL;
  CHECK_STR (path, in, "%s: the O_PATH fd is the file in root", mode);
  CHECK (fd < 0 || (fcntl (fd, F_GETFL) & O_PATH), "%s: fd is O_PATH", mode);
  free (path);
  free (in);
  errno_of (fd, err);

  err = NULL;
  fd = sr_ensure_target_in_root (t->rootfd, "passwd_link", false, 0644, &err);
  CHECK_ERRNO (fd, err, 0, "%s: existing file target is fine", mode);
  err = NULL;
  fd = sr_ensure_target_in_root (t->rootfd, "passwd_link", true, 0755, &err);
  CHECK_ERRNO (fd, err, ENOTDIR, "%s: dir target on a file: ENOTDIR",
         mode);
  err = NULL;
  fd = sr_ensure_target_in_root (t->rootfd, "etc", false, 0644, &err);
  CHECK_ERRNO (fd, err, EISDIR, "%s: file target on a dir: EISDIR",
         mode);

  err = NULL;
  fd = sr_ensure_target_in_root (t->rootfd, "escape_rel/dev/console", false, 0,
                                 &err);
  check_landed (t, fd, err, "outside/dev/console", "outside/dev", mode,
                "file target with new parents through a link stays in root");

  err = NULL;
  fd = sr_ensure_target_in_root (t->rootfd, "escape_abs/mnt/point", true, 0755,
                                 &err);
  check_landed (t, fd, err, "outside/mnt/point", "outside/mnt", mode,
                "dir target through a link stays in root");
}

static int
wait_child (pid_t pid)
{
  int status;
  if (pid < 0 || waitpid (pid, &status, 0) != pid)
    return -1;
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

/* A child swaps `a` and `b` (RENAME_EXCHANGE) until killed. */
static pid_t
start_swapper (const char *a, const char *b)
{
  fflush (stdout);
  pid_t pid = fork ();
  if (pid == 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      for (;;)
        renameat2 (AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
    }
  return pid;
}

static void
stop_swapper (pid_t pid)
{
  if (pid > 0)
    {
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
    }
}

/* Whatever fd a call returns is below the root; consumes fd and err;
 * counts the failures. */
static bool
beneath_root (const struct tree *t, int fd, sr_error *err, int *failed)
{
  bool ok = fd < 0 || sr_fd_is_beneath (fd, t->root);
  *failed += fd < 0;
  errno_of (fd, err);
  return ok;
}

/* "race" flips between a directory and a symlink to the host's `outside`
 * while we create below it: all must land in the root. */
static void
test_race_symlink_swap (struct tree *t, const char *mode)
{
  char *dir = xasprintf ("%s/race", t->root);
  char *link = xasprintf ("%s/race_link", t->root);
  mkdir (dir, 0755);
  symlink_or_die (t->outside, link);

  pid_t pid = start_swapper (dir, link);
  int bad = 0, failed = 0;
  for (int i = 0; i < 300; i++)
    {
      sr_error *err = NULL;
      int fd = sr_mkdir_in_root (t->rootfd, "race/x/y", 0755, &err);
      bad += !beneath_root (t, fd, err, &failed);
      err = NULL;
      fd = sr_ensure_target_in_root (t->rootfd, "race/f", false, 0644, &err);
      bad += !beneath_root (t, fd, err, &failed);
      err = NULL;
      fd = sr_open_in_root (t->rootfd, "race/x", O_RDONLY | O_DIRECTORY, 0, &err);
      bad += !beneath_root (t, fd, err, &failed);
    }
  stop_swapper (pid);
  printf ("# %s: %d of 900 calls lost the race and failed\n", mode, failed);
  CHECK (bad == 0, "%s: dir/symlink swap race: every fd in root (%d not)", mode,
         bad);
  char *x = xasprintf ("%s/x", t->outside);
  char *f = xasprintf ("%s/f", t->outside);
  CHECK (!exists (x) && !exists (f), "%s: dir/symlink swap race: nothing "
         "created on the host", mode);
  free (x);
  free (f);
  free (dir);
  free (link);
}

/* Under a seccomp profile that refuses openat2 with EPERM (as older
 * container engines' did), the probe must pick the fallback by itself. */
static void
test_openat2_denied (struct tree *t)
{
  fflush (stdout);
  pid_t pid = fork ();
  if (pid == 0)
    {
      scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);
      if (ctx == NULL
          || seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (openat2), 0) < 0
          || seccomp_load (ctx) < 0)
        _exit (3);
      sr_safepath_force_fallback (false);
      sr_procfs_reset ();
      char *s = read_in_root (t->rootfd, "escape_abs/secret", 0);
      _exit (strcmp (s, "inside") == 0 ? 0 : 1);
    }
  int r = wait_child (pid);
  CHECK (r == 0, "openat2 denied by seccomp (EPERM): the fallback is used "
         "(status %d)", r);
}

static void
run_suite (const char *mode, bool fallback)
{
  struct tree t;
  build_tree (&t, mode);
  sr_safepath_force_fallback (fallback);
  test_open (&t, mode);
  test_mkdir (&t, mode);
  test_ensure (&t, mode);
  test_race_symlink_swap (&t, mode);
  if (fallback)
    test_openat2_denied (&t);
  sr_safepath_force_fallback (false);
  free_tree (&t);
}

/* ---- procfs ---- */

static void
test_procfs_handle (void)
{
  sr_error *err = NULL;
  int root = sr_procfs_root (&err);
  struct statfs sfs;
  struct stat st;
  CHECK (root >= 0 && fstatfs (root, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC
             && fstat (root, &st) == 0 && st.st_ino == 1,
         "procfs handle is a procfs root");
  CHECK (root < 0 || (fcntl (root, F_GETFD) & FD_CLOEXEC), "handle is CLOEXEC");
  sr_error_free (err);

  char old[17] = "";
  prctl (PR_GET_NAME, old);
  err = NULL;
  int r = sr_procfs_write ("self/comm", "sr-test-comm", &err);
  CHECK (r == 0, "write self/comm");
  sr_error_free (err);
  char *text = NULL;
  err = NULL;
  r = sr_procfs_read ("/self/comm", &text, NULL, &err);
  CHECK (r == 0, "read self/comm");
  CHECK_STR (text, "sr-test-comm\n", "the write went to our own comm");
  free (text);
  sr_error_free (err);
  text = NULL;
  err = NULL;
  sr_procfs_read ("thread-self/comm", &text, NULL, &err);
  CHECK_STR (text, "sr-test-comm\n", "thread-self is translated");
  free (text);
  sr_error_free (err);
  prctl (PR_SET_NAME, old);

  err = NULL;
  int fd = sr_procfs_open ("sys/kernel/ostype", O_RDONLY, &err);
  char *s = slurp (fd);
  CHECK_STR (s, "Linux\n", "sys/kernel/ostype is readable");
  free (s);
  sr_error_free (err);

  err = NULL;
  fd = sr_procfs_open ("self/../../etc/passwd", O_RDONLY, &err);
  int e = errno_of (fd, err);
  CHECK (e != 0, "\"..\" out of procfs is refused");
  err = NULL;
  fd = sr_procfs_open ("self/exe", O_RDONLY, &err);
  CHECK_ERRNO (fd, err, ELOOP, "magic links are not followed");
}

static void
test_reopen (void)
{
  char *p = xasprintf ("%s/reopen", base);
  write_file (p, "reopened");
  int opath = open (p, O_PATH | O_CLOEXEC);
  sr_error *err = NULL;
  int fd = sr_reopen_fd (opath, O_RDONLY, &err);
  CHECK (fd >= 0 && !(fcntl (fd, F_GETFL) & O_PATH), "reopen gives a real fd");
  CHECK (fd < 0 || (fcntl (fd, F_GETFD) & FD_CLOEXEC), "reopened fd is CLOEXEC");
  char *s = slurp (fd);
  CHECK_STR (s, "reopened", "reopened fd reads the file");
  free (s);
  sr_error_free (err);

  char *path = sr_fd_path (opath);
  CHECK_STR (path, p, "sr_fd_path");
  CHECK (sr_fd_is_beneath (opath, base) && sr_fd_is_beneath (opath, "/")
             && !sr_fd_is_beneath (opath, "/tmp/sr-safe"),
         "sr_fd_is_beneath matches whole components");
  free (path);
  close (opath);
  free (p);
}

/* As under an old container engine's seccomp profile: no fsopen, no
 * open_tree, so the handle can only be /proc itself, over-mounts and all. */
static int
deny_new_mount_api (void)
{
  scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);
  int r = ctx == NULL ? -1 : 0;
  if (r == 0)
    r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (fsopen), 0);
  if (r == 0)
    r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (open_tree), 0);
  if (r == 0)
    r = seccomp_load (ctx);
  seccomp_release (ctx);
  return r;
}

enum overmount_mode
{
  HANDLE_INHERITED,
  HANDLE_NEW,
  HANDLE_PLAIN_PROC,
};

/* In a child with its own mount namespace, /proc/self/comm is bind-mounted
 * over with `fake` (a file, or another procfs file as in CVE-2025-52881): the
 * plain path sees it, the handle must not (with /proc itself as the handle,
 * refusing to cross the mount is right). */
static int
overmount_child (enum overmount_mode mode, const char *fake)
{
  if (unshare (CLONE_NEWNS) < 0
      || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return 3;
  prctl (PR_SET_NAME, "sr-real");
  char *target = xasprintf ("/proc/%d/comm", getpid ());
  if (mount (fake, target, NULL, MS_BIND, NULL) < 0)
    return 3;
  char *plain = slurp (open ("/proc/self/comm", O_RDONLY | O_CLOEXEC));
  char *faked = slurp (open (fake, O_RDONLY | O_CLOEXEC));
  if (strcmp (plain, faked) != 0)
    return 4; /* the attack did not even work: the test is meaningless */

  if (mode == HANDLE_PLAIN_PROC && deny_new_mount_api () < 0)
    return 3;
  if (mode != HANDLE_INHERITED)
    sr_procfs_reset ();
  char *text = NULL;
  sr_error *err = NULL;
  if (sr_procfs_read ("self/comm", &text, NULL, &err) < 0)
    return mode == HANDLE_PLAIN_PROC && sr_error_errno (err) == EXDEV ? 0 : 5;
  return strcmp (text, "sr-real\n") == 0 ? 0 : 1;
}

static void
test_overmount (void)
{
  static const char *const names[]
      = { "inherited handle", "new handle", "/proc as the handle" };
  char *file = xasprintf ("%s/fakecomm", base);
  write_file (file, "fake\n");
  const char *fakes[] = { file, "/proc/sys/kernel/ostype" };

  for (size_t f = 0; f < ARRAY_SIZE (fakes); f++)
    for (int mode = HANDLE_INHERITED; mode <= HANDLE_PLAIN_PROC; mode++)
      {
        fflush (stdout);
        pid_t pid = fork ();
        if (pid == 0)
          _exit (overmount_child (mode, fakes[f]));
        int r = wait_child (pid);
        CHECK (r == 0, "\"%s\" bound over /proc/self/comm does not fool the "
               "handle: %s (child status %d)", fakes[f], names[mode], r);
      }
  free (file);
}

/* A child in a new pid namespace is pid 1 there; the inherited handle (the
 * parent's pid namespace) must still find its own "self". */
static void
test_pidns (void)
{
  fflush (stdout);
  pid_t pid = fork ();
  if (pid == 0)
    {
      if (unshare (CLONE_NEWPID) < 0)
        _exit (3);
      pid_t inner = fork ();
      if (inner == 0)
        {
          prctl (PR_SET_NAME, "sr-pidns");
          char *text = NULL;
          sr_error *err = NULL;
          if (getpid () != 1 || sr_procfs_read ("self/comm", &text, NULL, &err) < 0)
            _exit (4);
          if (strcmp (text, "sr-pidns\n") != 0)
            _exit (1);
          /* A new handle is an instance of this pid namespace: "self" is 1. */
          sr_procfs_reset ();
          char *self = sr_procfs_readlink ("self", &err);
          _exit (self != NULL && strcmp (self, "1") == 0 ? 0 : 5);
        }
      _exit (wait_child (inner));
    }
  int r = wait_child (pid);
  CHECK (r == 0, "\"self\" is right in a child pid namespace, inherited "
         "handle and new (status %d)", r);
}

/* The lowest free fd number: it moves when an fd leaks. */
static int
lowest_free_fd (void)
{
  int fd = dup (0);
  close (fd);
  return fd;
}

static int
rm_entry (const char *path, const struct stat *st, int type, struct FTW *ftw)
{
  return type == FTW_DP ? rmdir (path) : unlink (path);
}

int
main (void)
{
  if (geteuid () != 0)
    {
      printf ("1..0 # SKIP needs root\n");
      return 0;
    }
  if (mkdtemp (base) == NULL)
    return 2;
  setvbuf (stdout, NULL, _IOLBF, 0);
  int free_fd = lowest_free_fd ();

  run_suite ("openat2", false);
  run_suite ("fallback", true);
  test_procfs_handle ();
  test_reopen ();
  test_overmount ();
  test_pidns ();
  sr_safepath_force_fallback (true);
  sr_procfs_reset ();
  test_procfs_handle ();
  test_overmount ();
  sr_safepath_force_fallback (false);
  sr_procfs_reset ();
  CHECK (lowest_free_fd () == free_fd, "no fd leaked (lowest free %d, was %d)",
         lowest_free_fd (), free_fd);

  nftw (base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  return unit_finish ();
}
