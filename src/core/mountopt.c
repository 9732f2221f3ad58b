/* Mount options and the primitives that apply them (see mountopt.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandrun/log.h"
#include "sandrun/mountopt.h"
#include "sandrun/procfs.h"
#include "sandrun/safepath.h"
#include "sandrun/util.h"

/* ---- the option table ---------------------------------------------------- */

enum opt_kind
{
  OPT_NOOP,
  OPT_SET,       /* MS_* flag set */
  OPT_CLEAR,     /* MS_* flag cleared */
  OPT_PROPAGATE, /* propagation type */
  OPT_REC_SET,   /* MOUNT_ATTR_* set recursively */
  OPT_REC_CLR,   /* MOUNT_ATTR_* cleared recursively */
  OPT_REC_ATIME, /* recursive atime mode (an enum in MOUNT_ATTR__ATIME) */
  OPT_COPYUP,
  OPT_UNSUPPORTED,
};

struct opt
{
  const char *name;
  enum opt_kind kind;
  unsigned long value;
};

#define ATIME_FLAGS (MS_NOATIME | MS_RELATIME | MS_STRICTATIME)

static const struct opt opt_table[] = {
  { "defaults", OPT_NOOP, 0 },
  { "ro", OPT_SET, MS_RDONLY },
  { "rw", OPT_CLEAR, MS_RDONLY },
  { "nosuid", OPT_SET, MS_NOSUID },
  { "suid", OPT_CLEAR, MS_NOSUID },
  { "nodev", OPT_SET, MS_NODEV },
  { "dev", OPT_CLEAR, MS_NODEV },
  { "noexec", OPT_SET, MS_NOEXEC },
  { "exec", OPT_CLEAR, MS_NOEXEC },
  { "sync", OPT_SET, MS_SYNCHRONOUS },
  { "async", OPT_CLEAR, MS_SYNCHRONOUS },
  { "dirsync", OPT_SET, MS_DIRSYNC },
  { "remount", OPT_SET, MS_REMOUNT },
  { "mand", OPT_SET, MS_MANDLOCK },
  { "nomand", OPT_CLEAR, MS_MANDLOCK },
  { "atime", OPT_CLEAR, MS_NOATIME },
  { "noatime", OPT_SET, MS_NOATIME },
  { "relatime", OPT_SET, MS_RELATIME },
  { "norelatime", OPT_CLEAR, MS_RELATIME },
  { "strictatime", OPT_SET, MS_STRICTATIME },
  { "nostrictatime", OPT_CLEAR, MS_STRICTATIME },
  { "diratime", OPT_CLEAR, MS_NODIRATIME },
  { "nodiratime", OPT_SET, MS_NODIRATIME },
  { "lazytime", OPT_SET, MS_LAZYTIME },
  { "nolazytime", OPT_CLEAR, MS_LAZYTIME },
  { "silent", OPT_SET, MS_SILENT },
  { "loud", OPT_CLEAR, MS_SILENT },
  { "iversion", OPT_SET, MS_I_VERSION },
  { "noiversion", OPT_CLEAR, MS_I_VERSION },
  { "nosymfollow", OPT_SET, MS_NOSYMFOLLOW },
  { "symfollow", OPT_CLEAR, MS_NOSYMFOLLOW },
  { "bind", OPT_SET, MS_BIND },
  { "rbind", OPT_SET, MS_BIND | MS_REC },
  { "private", OPT_PROPAGATE, MS_PRIVATE },
  { "rprivate", OPT_PROPAGATE, MS_PRIVATE | MS_REC },
  { "shared", OPT_PROPAGATE, MS_SHARED },
  { "rshared", OPT_PROPAGATE, MS_SHARED | MS_REC },
  { "slave", OPT_PROPAGATE, MS_SLAVE },
  { "rslave", OPT_PROPAGATE, MS_SLAVE | MS_REC },
  { "unbindable", OPT_PROPAGATE, MS_UNBINDABLE },
  { "runbindable", OPT_PROPAGATE, MS_UNBINDABLE | MS_REC },
  { "rro", OPT_REC_SET, MOUNT_ATTR_RDONLY },
  { "rrw", OPT_REC_CLR, MOUNT_ATTR_RDONLY },
  { "rnosuid", OPT_REC_SET, MOUNT_ATTR_NOSUID },
  { "rsuid", OPT_REC_CLR, MOUNT_ATTR_NOSUID },
  { "rnodev", OPT_REC_SET, MOUNT_ATTR_NODEV },
  { "rdev", OPT_REC_CLR, MOUNT_ATTR_NODEV },
  { "rnoexec", OPT_REC_SET, MOUNT_ATTR_NOEXEC },
  { "rexec", OPT_REC_CLR, MOUNT_ATTR_NOEXEC },
  { "rnodiratime", OPT_REC_SET, MOUNT_ATTR_NODIRATIME },
  { "rdiratime", OPT_REC_CLR, MOUNT_ATTR_NODIRATIME },
  { "rnosymfollow", OPT_REC_SET, MOUNT_ATTR_NOSYMFOLLOW },
  { "rsymfollow", OPT_REC_CLR, MOUNT_ATTR_NOSYMFOLLOW },
  /* atime is one mode, not bits: the "not X" forms fall back to the kernel
   * default, relatime. */
  { "rnoatime", OPT_REC_ATIME, MOUNT_ATTR_NOATIME },
  { "rstrictatime", OPT_REC_ATIME, MOUNT_ATTR_STRICTATIME },
  { "rrelatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME },
  { "ratime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME },
  { "rnorelatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME },
  { "rnostrictatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME },
  { "tmpcopyup", OPT_COPYUP, 0 },
  /* idmapped mounts need a mount made outside the user namespace: not yet */
  { "idmap", OPT_UNSUPPORTED, 0 },
  { "ridmap", OPT_UNSUPPORTED, 0 },
};

static const struct opt *
opt_lookup (const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE (opt_table); i++)
    if (strcmp (opt_table[i].name, name) == 0)
      return &opt_table[i];
  return NULL;
}

static void
opt_set_flag (struct sr_mount_opts *o, unsigned long f)
{
  /* The atime modes exclude each other: the last one named wins. */
  if (f & ATIME_FLAGS)
    o->flags &= ~ATIME_FLAGS;
  o->flags |= f;
  o->clear &= ~f;
}

static void
opt_apply (struct sr_mount_opts *o, const struct opt *d)
{
  switch (d->kind)
    {
    case OPT_NOOP:
    case OPT_UNSUPPORTED:
      break;
    case OPT_SET:
      opt_set_flag (o, d->value);
      break;
    case OPT_CLEAR:
      o->flags &= ~d->value;
      o->clear |= d->value;
      break;
    case OPT_PROPAGATE:
      o->propagation = d->value;
      break;
    case OPT_REC_SET:
      o->rec_set |= d->value;
      o->rec_clr &= ~d->value;
      break;
    case OPT_REC_CLR:
      o->rec_clr |= d->value;
      o->rec_set &= ~d->value;
      break;
    case OPT_REC_ATIME:
      o->rec_clr |= MOUNT_ATTR__ATIME;
      o->rec_set = (o->rec_set & ~(uint64_t) MOUNT_ATTR__ATIME) | d->value;
      break;
    case OPT_COPYUP:
      o->copyup = true;
      break;
    }
}

int
sr_mount_opts_parse (char *const *options, struct sr_mount_opts *out,
                     sr_error **err)
{
  memset (out, 0, sizeof *out);
  for (size_t i = 0; options != NULL && options[i] != NULL; i++)
    {
      const char *name = options[i];
      const struct opt *d;

      if (*name == '\0')
        continue;
      d = opt_lookup (name);
      if (d == NULL)
        {
          if (strchr (name, ',') != NULL)
            {
              sr_mount_opts_clear (out);
              return sr_fail (err, EINVAL, "mount option \"%s\": a comma "
                              "inside one option", name);
            }
          strv_append (&out->data, name);
          continue;
        }
      if (d->kind == OPT_UNSUPPORTED)
        {
          sr_mount_opts_clear (out);
          return sr_fail (err, ENOTSUP, "mount option \"%s\" is not supported",
                          name);
        }
      opt_apply (out, d);
    }
  return 0;
}

void
sr_mount_opts_clear (struct sr_mount_opts *o)
{
  strv_free (o->data);
  memset (o, 0, sizeof *o);
}

bool
sr_mount_opts_is_bind (const struct sr_mount_opts *o, const char *type)
{
  return (o->flags & MS_BIND) || str_eq (type, "bind");
}

char *
sr_mount_opts_data (const struct sr_mount_opts *o)
{
  size_t len = 0;
  char *s, *p;

  if (o->data == NULL || o->data[0] == NULL)
    return NULL;
  for (size_t i = 0; o->data[i]; i++)
    len += strlen (o->data[i]) + 1;
  p = s = xmalloc (len);
  for (size_t i = 0; o->data[i]; i++)
    {
      size_t n = strlen (o->data[i]);
      if (i > 0)
        *p++ = ',';
      memcpy (p, o->data[i], n);
      p += n;
    }
  *p = '\0';
  return s;
}

unsigned long
sr_propagation_parse (const char *name)
{
  const struct opt *d = name ? opt_lookup (name) : NULL;
  return (d != NULL && d->kind == OPT_PROPAGATE) ? d->value : 0;
}

/* MS_* flag ↔ MOUNT_ATTR_* bit, for the per-mount flags that have one. */
static const struct
{
  unsigned long ms;
  uint64_t attr;
} attr_map[] = {
  { MS_RDONLY, MOUNT_ATTR_RDONLY },       { MS_NOSUID, MOUNT_ATTR_NOSUID },
  { MS_NODEV, MOUNT_ATTR_NODEV },         { MS_NOEXEC, MOUNT_ATTR_NOEXEC },
  { MS_NODIRATIME, MOUNT_ATTR_NODIRATIME },
  { MS_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW },
};

void
sr_mount_opts_attr (const struct sr_mount_opts *o, uint64_t *set,
                    uint64_t *clr)
{
  *set = *clr = 0;
  for (size_t i = 0; i < ARRAY_SIZE (attr_map); i++)
    {
      if (o->flags & attr_map[i].ms)
        *set |= attr_map[i].attr;
      else if (o->clear & attr_map[i].ms)
        *clr |= attr_map[i].attr;
    }
  if ((o->flags | o->clear) & ATIME_FLAGS)
    {
      *clr |= MOUNT_ATTR__ATIME;
      if (o->flags & MS_STRICTATIME)
        *set |= MOUNT_ATTR_STRICTATIME;
      else if (o->flags & MS_NOATIME)
        *set |= MOUNT_ATTR_NOATIME;
      else
        *set |= MOUNT_ATTR_RELATIME;
    }
}

/* ---- the primitives ------------------------------------------------------ */

static bool force_legacy;
static int api_state = -1;

void
sr_mount_force_legacy (bool on)
{
  force_legacy = on;
}

bool
sr_mount_api_available (void)
{
  if (force_legacy)
    return false;
  if (api_state < 0)
    {
      struct mount_attr a = { 0 };
      long r = syscall (SYS_mount_setattr, -1, "", AT_EMPTY_PATH, &a,
                        sizeof a);
      api_state = !(r < 0 && errno == ENOSYS);
    }
  return api_state;
}

/* The path that reaches an fd through the verified procfs handle, for the
 * mount(2) fallback, which only takes paths. */
static char *
fd_magic_path (int fd, sr_error **err)
{
  int proc = sr_procfs_root (err);
  if (proc < 0)
    return NULL;
  return xasprintf ("/proc/self/fd/%d/self/fd/%d", proc, fd);
}

/* The kernel's message about a failed fsconfig, "(tmpfs: Bad value for
 * 'size')", or "". */
static char *
fs_log (int fsfd)
{
  char buf[512];
  ssize_t n = read (fsfd, buf, sizeof buf - 1);
  if (n <= 2)
    return xstrdup ("");
  buf[n] = '\0';
  buf[strcspn (buf, "\n")] = '\0';
  return xasprintf (" (%s)", buf + 2); /* skip the "e " severity prefix */
}

static int
fs_config (int fsfd, const char *key, const char *value, sr_error **err)
{
  unsigned cmd = value ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG;
  if (syscall (SYS_fsconfig, fsfd, cmd, key, value, 0) == 0)
    return 0;
  int saved = errno;
  _cleanup_free_ char *log = fs_log (fsfd);
  return sr_fail (err, saved, "option \"%s%s%s\"%s", key, value ? "=" : "",
                  value ? value : "", log);
}

/* Superblock flags that fsconfig knows by name. */
static const struct
{
  unsigned long ms;
  const char *name;
} sb_flags[] = {
  { MS_RDONLY, "ro" },       { MS_SYNCHRONOUS, "sync" },
  { MS_DIRSYNC, "dirsync" }, { MS_MANDLOCK, "mand" },
  { MS_LAZYTIME, "lazytime" }, { MS_SILENT, "silent" },
  { MS_I_VERSION, "iversion" },
};

static int
fs_config_all (int fsfd, const char *source, const struct sr_mount_opts *o,
               sr_error **err)
{
  if (source && fs_config (fsfd, "source", source, err) < 0)
    return -1;
  for (size_t i = 0; i < ARRAY_SIZE (sb_flags); i++)
    if ((o->flags & sb_flags[i].ms) && fs_config (fsfd, sb_flags[i].name,
                                                  NULL, err) < 0)
      return -1;
  for (size_t i = 0; o->data && o->data[i]; i++)
    {
      _cleanup_free_ char *key = xstrdup (o->data[i]);
      char *eq = strchr (key, '=');
      if (eq)
        *eq++ = '\0';
      if (fs_config (fsfd, key, eq, err) < 0)
        return -1;
    }
  return 0;
}

/* A detached mount of a new filesystem, configured, flags applied. */
static int
new_fs_detached (const char *type, const char *source,
                 const struct sr_mount_opts *o, sr_error **err)
{
  _cleanup_close_ int fsfd = (int) syscall (SYS_fsopen, type, FSOPEN_CLOEXEC);
  uint64_t set, clr;
  int mfd;

  if (fsfd < 0)
    return sr_fail (err, errno, "fsopen");
  if (fs_config_all (fsfd, source, o, err) < 0)
    return -1;
  if (syscall (SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    {
      int saved = errno;
      _cleanup_free_ char *log = fs_log (fsfd);
      return sr_fail (err, saved, "create superblock%s", log);
    }
  sr_mount_opts_attr (o, &set, &clr);
  mfd = (int) syscall (SYS_fsmount, fsfd, FSMOUNT_CLOEXEC, (unsigned) set);
  if (mfd < 0)
    return sr_fail (err, errno, "fsmount");
  return mfd;
}

static int
setattr_raw (int mntfd, uint64_t set, uint64_t clr, bool recursive,
             unsigned long propagation)
{
  struct mount_attr a = { .attr_set = set, .attr_clr = clr,
                          .propagation = propagation & ~MS_REC };
  unsigned flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
  return (int) syscall (SYS_mount_setattr, mntfd, "", flags, &a, sizeof a);
}

/* mount(2) fallback of mount_setattr for one mount: a bind remount keeps
 * the flags it is not asked to change (some are locked in a user ns). */
static int
setattr_legacy (int mntfd, uint64_t set, uint64_t clr, sr_error **err)
{
  _cleanup_free_ char *path = fd_magic_path (mntfd, err);
  struct statvfs sv;
  unsigned long flags;

  if (path == NULL)
    return -1;
  if (fstatvfs (mntfd, &sv) < 0)
    return sr_fail (err, errno, "statvfs");
  /* ST_* and MS_* share their values for the per-mount flags. */
  flags = sv.f_flag & (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
                       | MS_NOATIME | MS_NODIRATIME | MS_RELATIME
                       | MS_NOSYMFOLLOW);
  for (size_t i = 0; i < ARRAY_SIZE (attr_map); i++)
    {
      if (set & attr_map[i].attr)
        flags |= attr_map[i].ms;
      if (clr & attr_map[i].attr)
        flags &= ~attr_map[i].ms;
    }
  if (clr & MOUNT_ATTR__ATIME)
    {
      flags &= ~(unsigned long) ATIME_FLAGS;
      if ((set & MOUNT_ATTR__ATIME) == MOUNT_ATTR_NOATIME)
        flags |= MS_NOATIME;
      else if ((set & MOUNT_ATTR__ATIME) == MOUNT_ATTR_STRICTATIME)
        flags |= MS_STRICTATIME;
      else
        flags |= MS_RELATIME;
    }
  if (mount (NULL, path, NULL, MS_BIND | MS_REMOUNT | flags, NULL) < 0)
    return sr_fail (err, errno, "remount");
  return 0;
}

int
sr_mount_setattr_fd (int mntfd, uint64_t set, uint64_t clr, bool recursive,
                     unsigned long propagation, sr_error **err)
{
  bool api = sr_mount_api_available ();

  if (set != 0 || clr != 0)
    {
      if (!api && recursive)
        return sr_fail (err, ENOSYS, "recursive mount attributes need "
                        "mount_setattr (Linux 5.12)");
      if (!api && setattr_legacy (mntfd, set, clr, err) < 0)
        return -1;
      if (api && setattr_raw (mntfd, set, clr, recursive, 0) < 0)
        return sr_fail (err, errno, "mount_setattr");
    }
  if (propagation == 0)
    return 0;
  if (api)
    {
      if (setattr_raw (mntfd, 0, 0, propagation & MS_REC, propagation) < 0)
        return sr_fail (err, errno, "set propagation");
      return 0;
    }
  _cleanup_free_ char *path = fd_magic_path (mntfd, err);
  if (path == NULL)
    return -1;
  if (mount (NULL, path, NULL, propagation, NULL) < 0)
    return sr_fail (err, errno, "set propagation");
  return 0;
}

/* The flags of `o` on a new bind mount.  A flag the mount cannot lose (the
 * source's nosuid, nodev, ... locked by a user namespace) makes clearing it
 * EPERM: mount(8) semantics would fail too, runc keeps the locked flag;
 * so do we, with a warning. */
static int
bind_apply_flags (int mntfd, const struct sr_mount_opts *o, sr_error **err)
{
  uint64_t set, clr;

  sr_mount_opts_attr (o, &set, &clr);
  if (set == 0 && clr == 0)
    return 0;
  if (!sr_mount_api_available ())
    return setattr_legacy (mntfd, set, clr, err);
  if (setattr_raw (mntfd, set, clr, false, 0) == 0)
    return 0;
  if (errno == EPERM && (clr & ~(uint64_t) MOUNT_ATTR__ATIME))
    {
      sr_warn ("cannot clear locked mount flags, keeping them");
      clr &= MOUNT_ATTR__ATIME;
      if (setattr_raw (mntfd, set, clr, false, 0) == 0)
        return 0;
    }
  return sr_fail (err, errno, "mount_setattr");
}

/* After a mount landed on t->fd: check where it is, then the propagation
 * and the recursive attributes.  Takes ownership of mntfd. */
static int
finish_mount (const struct sr_mount_at *t, int mntfd_owned,
              const struct sr_mount_opts *o, sr_error **err)
{
  _cleanup_close_ int mntfd = mntfd_owned;

  if (t->rootpath && !sr_fd_is_beneath (mntfd, t->rootpath))
    {
      _cleanup_free_ char *where = sr_fd_path (mntfd);
      return sr_fail (err, EXDEV, "mounted at \"%s\", outside the rootfs",
                      where ? where : "?");
    }
  if (o->propagation
      && sr_mount_setattr_fd (mntfd, 0, 0, false, o->propagation, err) < 0)
    return -1;
  if ((o->rec_set | o->rec_clr)
      && sr_mount_setattr_fd (mntfd, o->rec_set, o->rec_clr, true, 0, err) < 0)
    return -1;
  return steal_fd (&mntfd);
}

static int
attach (int mntfd, int targetfd, sr_error **err)
{
  if (syscall (SYS_move_mount, mntfd, "", targetfd, "",
               MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return sr_fail (err, errno, "move_mount");
  return 0;
}

/* The legacy way: mount(2) on the magic link of the target, then the new
 * mount's root is found again by resolving the path under the root. */
static int
legacy_mount (const struct sr_mount_at *t, const char *source,
              const char *type, unsigned long flags, const char *data,
              sr_error **err)
{
  _cleanup_free_ char *target = fd_magic_path (t->fd, err);
  int fd;

  if (target == NULL)
    return -1;
  if (mount (source, target, type, flags, data) < 0)
    return sr_fail (err, errno, "mount");
  fd = sr_open_in_root (t->rootfd, t->path, O_PATH, 0, err);
  if (fd < 0)
    return sr_wrap (err, "reopen after mount");
  return fd;
}

/* ---- tmpcopyup ----------------------------------------------------------- */

/* The image decides how deep its trees go; the stack does not. */
#define COPY_MAX_DEPTH 128

static int copy_dir (int src, int dst, unsigned depth, sr_error **err);

static int
copy_file (int src, int dst, const char *name, const struct stat *st,
           sr_error **err)
{
  _cleanup_close_ int in = openat (src, name, O_RDONLY | O_NOFOLLOW
                                   | O_NONBLOCK | O_CLOEXEC);
  _cleanup_close_ int out = -1;
  struct stat now;
  char buf[65536];
  ssize_t n;

  /* What was looked at must be what is read: a regular file still. */
  if (in < 0 || fstat (in, &now) < 0)
    return sr_fail (err, errno, "open \"%s\"", name);
  if (!S_ISREG (now.st_mode) || now.st_ino != st->st_ino)
    return sr_fail (err, EAGAIN, "\"%s\" changed while copied", name);
  out = openat (dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW
                | O_CLOEXEC, 0600);
  if (out < 0)
    return sr_fail (err, errno, "create \"%s\"", name);
  while ((n = sr_read_all (in, buf, sizeof buf)) > 0)
    if (sr_write_all (out, buf, (size_t) n) < 0)
      return sr_fail (err, errno, "write \"%s\"", name);
  if (n < 0)
    return sr_fail (err, errno, "read \"%s\"", name);
  return 0;
}

static int
copy_subdir (int src, int dst, const char *name, unsigned depth,
             sr_error **err)
{
  _cleanup_close_ int in = -1;
  _cleanup_close_ int out = -1;

  if (depth >= COPY_MAX_DEPTH)
    return sr_fail (err, ELOOP, "\"%s\": directories nested too deep", name);
  in = openat (src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0)
    return sr_fail (err, errno, "open \"%s\"", name);
  if (mkdirat (dst, name, 0700) < 0)
    return sr_fail (err, errno, "mkdir \"%s\"", name);
  out = openat (dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (out < 0)
    return sr_fail (err, errno, "open \"%s\"", name);
  if (copy_dir (in, out, depth + 1, err) < 0)
    return sr_wrap (err, "%s", name);
  return 0;
}

static int
copy_link (int src, int dst, const char *name, sr_error **err)
{
  char target[PATH_MAX];
  ssize_t n = readlinkat (src, name, target, sizeof target - 1);

  if (n < 0)
    return sr_fail (err, errno, "readlink \"%s\"", name);
  target[n] = '\0';
  if (symlinkat (target, dst, name) < 0)
    return sr_fail (err, errno, "symlink \"%s\"", name);
  return 0;
}

/* One entry, then its owner, mode and times (never through a link). */
static int
copy_entry (int src, int dst, const char *name, unsigned depth,
            sr_error **err)
{
  struct stat st;
  int r;

  if (fstatat (src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return sr_fail (err, errno, "stat \"%s\"", name);
  if (S_ISDIR (st.st_mode))
    r = copy_subdir (src, dst, name, depth, err);
  else if (S_ISREG (st.st_mode))
    r = copy_file (src, dst, name, &st, err);
  else if (S_ISLNK (st.st_mode))
    r = copy_link (src, dst, name, err);
  else if (mknodat (dst, name, st.st_mode, st.st_rdev) == 0)
    r = 0;
  else
    {
      /* A device node in a user namespace: nothing to copy it as. */
      sr_warn ("tmpcopyup: skipping \"%s\": %s", name, strerror (errno));
      return 0;
    }
  if (r < 0)
    return -1;
  struct timespec times[2] = { st.st_atim, st.st_mtim };
  if (fchownat (dst, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0
      || (!S_ISLNK (st.st_mode)
          && fchmodat (dst, name, st.st_mode & 07777, 0) < 0)
      || utimensat (dst, name, times, AT_SYMLINK_NOFOLLOW) < 0)
    return sr_fail (err, errno, "attributes of \"%s\"", name);
  return 0;
}

static int
copy_dir (int src, int dst, unsigned depth, sr_error **err)
{
  int fd = fcntl (src, F_DUPFD_CLOEXEC, 3);
  _cleanup_closedir_ DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *de;

  if (d == NULL)
    {
      sr_close (fd);
      return sr_fail (err, errno, "read directory");
    }
  while ((errno = 0, de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (copy_entry (src, dst, de->d_name, depth, err) < 0)
        return -1;
    }
  if (errno != 0)
    return sr_fail (err, errno, "read directory");
  return 0;
}

/* tmpcopyup: what the target directory holds, into the detached mount that
 * will cover it. */
static int
copy_up (int targetfd, int mntfd, sr_error **err)
{
  _cleanup_close_ int src = sr_reopen_fd (targetfd, O_RDONLY | O_DIRECTORY,
                                          err);
  _cleanup_close_ int dst = -1;

  if (src < 0)
    return -1;
  dst = openat (mntfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dst < 0)
    return sr_fail (err, errno, "open the new mount");
  if (copy_dir (src, dst, 0, err) < 0)
    return sr_wrap (err, "tmpcopyup");
  return 0;
}

int
sr_mount_fs_at (const struct sr_mount_at *t, const char *type,
                const char *source, const struct sr_mount_opts *o,
                sr_error **err)
{
  int mntfd;

  if (sr_mount_api_available ())
    {
      mntfd = new_fs_detached (type, source, o, err);
      if (mntfd < 0)
        return -1;
      if ((o->copyup && copy_up (t->fd, mntfd, err) < 0)
          || attach (mntfd, t->fd, err) < 0)
        {
          sr_close (mntfd);
          return -1;
        }
    }
  else if (o->copyup)
    return sr_fail (err, ENOSYS, "tmpcopyup needs the new mount API "
                    "(Linux 5.12)");
  else
    {
      _cleanup_free_ char *data = sr_mount_opts_data (o);
      unsigned long flags = o->flags & ~(MS_BIND | MS_REC | MS_REMOUNT);
      mntfd = legacy_mount (t, source ? source : type, type, flags, data, err);
      if (mntfd < 0)
        return -1;
    }
  return finish_mount (t, mntfd, o, err);
}

static int
bind_legacy (const struct sr_mount_at *t, int srcdirfd, const char *srcpath,
             unsigned long rec, sr_error **err)
{
  _cleanup_free_ char *src = NULL;

  if (srcdirfd == AT_FDCWD)
    src = xstrdup (srcpath);
  else
    {
      _cleanup_free_ char *fdp = fd_magic_path (srcdirfd, err);
      if (fdp == NULL)
        return -1;
      src = *srcpath ? xasprintf ("%s/%s", fdp, srcpath) : steal_pointer (&fdp);
    }
  return legacy_mount (t, src, NULL, MS_BIND | rec, NULL, err);
}

int
sr_mount_bind_at (const struct sr_mount_at *t, int srcdirfd,
                  const char *srcpath, const struct sr_mount_opts *o,
                  sr_error **err)
{
  _cleanup_close_ int mntfd = -1;

  if (sr_mount_api_available ())
    {
      unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC;
      if (o->flags & MS_REC)
        flags |= AT_RECURSIVE;
      if (*srcpath == '\0')
        flags |= AT_EMPTY_PATH;
      mntfd = (int) syscall (SYS_open_tree, srcdirfd, srcpath, flags);
      if (mntfd < 0)
        return sr_fail (err, errno, "open_tree");
      /* Flags first: the mount is never visible without them. */
      if (bind_apply_flags (mntfd, o, err) < 0 || attach (mntfd, t->fd, err) < 0)
        return -1;
    }
  else
    {
      mntfd = bind_legacy (t, srcdirfd, srcpath, o->flags & MS_REC, err);
      if (mntfd < 0 || bind_apply_flags (mntfd, o, err) < 0)
        return -1;
    }
  return finish_mount (t, steal_fd (&mntfd), o, err);
}

int
sr_mount_remount_at (const struct sr_mount_at *t, const char *type,
                     const struct sr_mount_opts *o, sr_error **err)
{
  _cleanup_free_ char *data = sr_mount_opts_data (o);
  int fd;

  if (data != NULL && !(o->flags & MS_BIND))
    {
      _cleanup_free_ char *path = fd_magic_path (t->fd, err);
      unsigned long flags = o->flags & ~(MS_BIND | MS_REC);
      if (path == NULL)
        return -1;
      if (mount (NULL, path, type, flags, data) < 0)
        return sr_fail (err, errno, "remount");
    }
  else if (bind_apply_flags (t->fd, o, err) < 0)
    return -1;
  fd = fcntl (t->fd, F_DUPFD_CLOEXEC, 3);
  if (fd < 0)
    return sr_fail (err, errno, "dup");
  return finish_mount (t, fd, o, err);
}
