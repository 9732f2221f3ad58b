/* The container process's identity (groups, gid, uid, capabilities, umask,
 * cwd), noNewPrivileges, the executable lookup and the last fd sweep before
 * execve. */
#include <dirent.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sandrun/log.h"
#include "core/process.h"
#include "util/procfs.h"
#include "sandrun/util.h"

#define DEFAULT_PATH                                                           \
  "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define DEFAULT_UMASK 0022

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* ---- groups, gid, uid ---------------------------------------------------- */

static bool
setgroups_denied (void)
{
  _cleanup_free_ char *s = NULL;

  if (sr_procfs_read ("self/setgroups", &s, NULL, NULL) < 0)
    return false;
  return str_has_prefix (s, "deny");
}

static char *
format_gids (const oci_user *u)
{
  char *list = xstrdup ("");

  for (size_t i = 0; i < u->additional_gids_len; i++)
    {
      char *l = xasprintf ("%s%s%" PRIu32, list, i ? " " : "",
                           u->additional_gids[i]);
      free (list);
      list = l;
    }
  return list;
}

static int
set_groups (const oci_user *u, sr_error **err)
{
  _cleanup_free_ gid_t *gids = NULL;
  _cleanup_free_ char *list = NULL;
  size_t n = u->additional_gids_len;
  int errnum;

  gids = xcalloc (n ? n : 1, sizeof *gids);
  for (size_t i = 0; i < n; i++)
    gids[i] = (gid_t) u->additional_gids[i];
  if (setgroups (n, gids) == 0)
    return 0;

  errnum = errno;
  /* In a user namespace whose setgroups is "deny" the inherited groups
   * cannot be changed, and none were asked for: nothing to do. */
  if (errnum == EPERM && setgroups_denied ())
    {
      if (n == 0)
        return 0;
      list = format_gids (u);
      return sr_fail (err, errnum,
                      "setgroups [%s] (setgroups is denied in this user "
                      "namespace)",
                      list);
    }
  list = format_gids (u);
  return sr_fail (err, errnum, "setgroups [%s]", list);
}

/* Give the new user its stdio, as runc does: a process that reopens
 * /dev/stdout or its tty must be allowed to.  /dev/null and regular files
 * (a host file the caller redirected into the container) are left alone. */
static void
fix_stdio_owner (uid_t uid)
{
  for (int fd = 0; fd <= 2; fd++)
    {
      struct stat st;

      if (fstat (fd, &st) < 0 || st.st_uid == uid || S_ISREG (st.st_mode)
          || S_ISDIR (st.st_mode))
        continue;
      if (S_ISCHR (st.st_mode) && st.st_rdev == makedev (1, 3))
        continue;
      if (fchown (fd, uid, (gid_t) -1) < 0)
        sr_debug ("chown stdio fd %d to uid %u: %s", fd, (unsigned) uid,
                  strerror (errno));
    }
}

static int
set_ids (const oci_user *u, sr_error **err)
{
  if (set_groups (u, err) < 0)
    return -1;
  if (setresgid (u->gid, u->gid, u->gid) < 0)
    return sr_fail (err, errno, "setresgid %" PRIu32, u->gid);
  if (setresuid (u->uid, u->uid, u->uid) < 0)
    return sr_fail (err, errno, "setresuid %" PRIu32, u->uid);
  return 0;
}

/* ---- cwd ----------------------------------------------------------------- */

/* chdir, then make sure the result is inside the root: a cwd reached through
 * a leaked fd (/proc/self/fd/N) would let the process escape
 * (CVE-2024-21626), and getcwd reports such a directory as unreachable. */
static int
enter_cwd (const char *cwd, sr_error **err)
{
  _cleanup_free_ char *got = NULL;

  if (chdir (cwd) < 0)
    return sr_fail (err, errno, "chdir \"%s\"", cwd);
  got = getcwd (NULL, 0);
  if (got == NULL || got[0] != '/')
    return sr_fail (err, got ? ENOENT : errno,
                    "cwd \"%s\" is outside the container root", cwd);
  return 0;
}

/* Like runc: try the chdir as root first (the user may run in a directory
 * only root can enter, e.g. a root-owned 0700 WORKDIR), and once more as the
 * user when root is the one refused (root squashing on NFS, a userns root
 * that does not own the directory).  Returns 1 when done, 0 to retry. */
static int
enter_cwd_early (const char *cwd, sr_error **err)
{
  if (chdir (cwd) == 0)
    return enter_cwd (cwd, err) < 0 ? -1 : 1;
  if (errno == EACCES || errno == EPERM)
    return 0;
  return sr_fail (err, errno, "chdir \"%s\"", cwd);
}

/* ---- the switch ---------------------------------------------------------- */

int
sr_process_switch_identity (const oci_process *p, struct sr_caps_late *late, sr_error **err)
{
  const char *cwd = p->cwd;
  int cwd_done = 1;

  if (cwd != NULL && cwd[0] != '\0')
    {
      if (cwd[0] != '/')
        return sr_fail (err, EINVAL, "process.cwd \"%s\": not an absolute path",
                        cwd);
      cwd_done = enter_cwd_early (cwd, err);
      if (cwd_done < 0)
        return -1;
    }

  if (sr_capabilities_drop_bounding (p->capabilities, err) < 0)
    return -1;
  /* Keep the permitted set across the uid change; the exact sets are
   * applied right after. */
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return sr_fail (err, errno, "prctl PR_SET_KEEPCAPS");
  fix_stdio_owner (p->user.uid);
  if (set_ids (&p->user, err) < 0)
    return -1;
  if (!cwd_done && enter_cwd (cwd, err) < 0)
    return -1;
  if (prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    return sr_fail (err, errno, "prctl PR_SET_KEEPCAPS");
  if (sr_capabilities_apply (p->capabilities, late, err) < 0)
    return -1;

  umask (p->user.umask.set ? (mode_t) (p->user.umask.value & 07777)
                           : DEFAULT_UMASK);
  return 0;
}

int
sr_no_new_privs_apply (const oci_process *p, sr_error **err)
{
  if (p == NULL || !p->no_new_privileges)
    return 0;
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return sr_fail (err, errno, "prctl PR_SET_NO_NEW_PRIVS");
  return 0;
}

/* ---- the executable ------------------------------------------------------ */

/* 0 when `path` is a file execve could run as this process (effective ids
 * and capabilities, as execve checks), else an errno value. */
static int
check_executable (const char *path)
{
  struct stat st;

  if (stat (path, &st) < 0)
    return errno;
  if (!S_ISREG (st.st_mode))
    return EACCES;
  if (faccessat (AT_FDCWD, path, X_OK, AT_EACCESS) < 0)
    return errno;
  return 0;
}

static const char *
env_get (char *const *env, const char *name)
{
  size_t len = strlen (name);

  for (size_t i = 0; env != NULL && env[i] != NULL; i++)
    if (strncmp (env[i], name, len) == 0 && env[i][len] == '=')
      return env[i] + len + 1;
  return NULL;
}

/* execvp's search: each PATH element in turn (an empty one is the cwd),
 * skipping what is missing or not executable. */
static char *
search_path (const char *name, const char *path)
{
  const char *dir = path;

  for (;;)
    {
      const char *end = strchrnul (dir, ':');
      _cleanup_free_ char *candidate = NULL;

      if (end == dir)
        candidate = xasprintf ("./%s", name);
      else
        candidate = xasprintf ("%.*s/%s", (int) (end - dir), dir, name);
      if (check_executable (candidate) == 0)
        return steal_pointer (&candidate);
      if (*end == '\0')
        return NULL;
      dir = end + 1;
    }
}

int
sr_fail_exec (sr_error **err, int errnum, const char *path)
{
  char text[128];

  snprintf (text, sizeof text, "%s", strerror (errnum));
  text[0] = (char) tolower ((unsigned char) text[0]);
  sr_fail (err, 0, "exec \"%s\": %s", path, text);
  if (err != NULL && *err != NULL)
    (*err)->errnum = errnum;
  return -1;
}

char *
sr_process_find_executable (const oci_process *p, sr_error **err)
{
  const char *name, *path;
  char *found;
  int errnum;

  if (p == NULL || p->args == NULL || p->args[0] == NULL)
    {
      sr_fail (err, EINVAL, "process.args: empty");
      return NULL;
    }
  name = p->args[0];
  if (name[0] == '\0' || strchr (name, '/') != NULL)
    {
      errnum = name[0] == '\0' ? ENOENT : check_executable (name);
      if (errnum != 0)
        {
          sr_fail_exec (err, errnum, name);
          return NULL;
        }
      return xstrdup (name);
    }

  path = env_get (p->env, "PATH");
  found = search_path (name, path != NULL ? path : DEFAULT_PATH);
  /* runc's wording: engines map "executable file not found" to exit 127. */
  if (found == NULL)
    sr_fail (err, ENOENT, "exec \"%s\": executable file not found in $PATH",
             name);
  return found;
}

/* ---- environment --------------------------------------------------------- */

#define PASSWD_MAX (1 << 20)

/* /etc/passwd of the container, read as a regular file only: it belongs to
 * the image, and a FIFO or a device there must not hang or flood the init. */
static char *
read_passwd (void)
{
  _cleanup_close_ int fd = -1;
  _cleanup_free_ char *buf = NULL;
  struct stat st;
  ssize_t n;

  fd = open ("/etc/passwd", O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
      || st.st_size > PASSWD_MAX)
    return NULL;
  buf = xmalloc ((size_t) st.st_size + 1);
  n = sr_read_all (fd, buf, (size_t) st.st_size);
  if (n < 0)
    return NULL;
  buf[n] = '\0';
  return steal_pointer (&buf);
}

/* The home field of the first "name:pw:uid:gid:gecos:home:shell" line of
 * `uid`, malloc'd; NULL when there is none. */
static char *
passwd_home (char *passwd, uid_t uid)
{
  char *save = NULL;

  for (char *line = strtok_r (passwd, "\n", &save); line != NULL;
       line = strtok_r (NULL, "\n", &save))
    {
      char *field[7] = { NULL };
      char *f = line;
      long id;
      int n = 0;

      while (n < 7 && f != NULL)
        {
          field[n++] = f;
          f = strchr (f, ':');
          if (f != NULL)
            *f++ = '\0';
        }
      if (n >= 6 && sr_parse_long (field[2], &id) == 0 && id == (long) uid
          && field[5][0] != '\0')
        return xstrdup (field[5]);
    }
  return NULL;
}

char **
sr_process_env (const oci_process *p)
{
  char **env = strv_dup (p->env);
  _cleanup_free_ char *passwd = NULL;
  _cleanup_free_ char *home = NULL;
  _cleanup_free_ char *entry = NULL;

  if (env_get (env, "HOME") != NULL)
    return env;
  passwd = read_passwd ();
  if (passwd != NULL)
    home = passwd_home (passwd, p->user.uid);
  entry = xasprintf ("HOME=%s", home != NULL ? home : "/");
  strv_append (&env, entry);
  return env;
}

/* ---- fds ----------------------------------------------------------------- */

static int
set_cloexec (int fd, sr_error **err)
{
  int flags = fcntl (fd, F_GETFD);

  if (flags >= 0 && !(flags & FD_CLOEXEC)
      && fcntl (fd, F_SETFD, flags | FD_CLOEXEC) < 0)
    return sr_fail (err, errno, "set close-on-exec on fd %d", fd);
  return 0;
}

/* Without /proc (or once the init is a non-dumpable non-root user, whose
 * /proc/self/fd is root's): every possible fd. */
static int
cloexec_from_every_fd (int first, sr_error **err)
{
  struct rlimit r;
  int last = 65535;

  if (getrlimit (RLIMIT_NOFILE, &r) == 0 && r.rlim_max < (rlim_t) last)
    last = (int) r.rlim_max;
  for (int fd = first; fd <= last; fd++)
    if (set_cloexec (fd, err) < 0)
      return -1;
  return 0;
}

static int
cloexec_from_procfs (int first, sr_error **err)
{
  _cleanup_closedir_ DIR *dir = NULL;
  struct dirent *de;
  int dfd;

  dfd = sr_procfs_open ("self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC, NULL);
  if (dfd < 0)
    return cloexec_from_every_fd (first, err);
  dir = fdopendir (dfd);
  if (dir == NULL)
    {
      sr_close (dfd);
      return sr_fail (err, errno, "fdopendir /proc/self/fd");
    }
  while ((errno = 0, de = readdir (dir)) != NULL)
    {
      long fd;

      if (sr_parse_long (de->d_name, &fd) < 0 || fd < first || fd == dfd)
        continue;
      if (set_cloexec ((int) fd, err) < 0)
        return -1;
    }
  if (errno != 0)
    return sr_fail (err, errno, "read /proc/self/fd");
  return 0;
}

int
sr_fds_cloexec_from (int first, sr_error **err)
{
  if (first < 0)
    first = 0;
#ifdef SYS_close_range
  if (syscall (SYS_close_range, (unsigned) first, ~0U, CLOSE_RANGE_CLOEXEC)
      == 0)
    return 0;
  /* ENOSYS: kernel < 5.9; EINVAL: no CLOSE_RANGE_CLOEXEC (< 5.11). */
  if (errno != ENOSYS && errno != EINVAL)
    return sr_fail (err, errno, "close_range %d", first);
#endif
  return cloexec_from_procfs (first, err);
}
