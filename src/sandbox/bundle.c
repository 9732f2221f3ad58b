/* The ephemeral bundle of a sandbox (see bundle.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "bundle.h"
#include "rootfs.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

#define SLOTS_DIR "slots"
#define LOCK_FILE "lock"

/* Mounts made from here on stay in this process's own namespace: they go
 * away with it, whatever way it ends. */
static int
private_mount_ns (sr_error **err)
{
  static bool done;

  if (done)
    return 0;
  if (unshare (CLONE_NEWNS) < 0)
    return sr_fail (err, errno, "a private mount namespace");
  if (mount (NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
    return sr_fail (err, errno, "a private mount namespace: make / a slave");
  if (mkdir (SB_RUN_DIR, 0755) < 0 && errno != EEXIST)
    return sr_fail (err, errno, "mkdir \"%s\"", SB_RUN_DIR);
  if (mount ("tmpfs", SB_RUN_DIR, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
             "size=1m,mode=0755")
      < 0)
    return sr_fail (err, errno, "mount a tmpfs on \"%s\"", SB_RUN_DIR);
  done = true;
  return 0;
}

static int
mkdir_ok (const char *path, mode_t mode, sr_error **err)
{
  if (mkdir (path, mode) < 0 && errno != EEXIST)
    return sr_fail (err, errno, "mkdir \"%s\"", path);
  return 0;
}

static char *
state_dir (const struct sr_globals *g)
{
  return xasprintf ("%s/" SB_STATE_DIR, g->root);
}

/* The first free slot; its lock is held on *fd from then on. */
static int
take_slot (const char *sbdir, struct sb_bundle *b, sr_error **err)
{
  _cleanup_free_ char *slots = xasprintf ("%s/" SLOTS_DIR, sbdir);
  if (mkdir_ok (slots, 0700, err) < 0)
    return -1;
  _cleanup_close_ int dfd = open (slots, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return sr_fail (err, errno, "open \"%s\"", slots);
  for (uint32_t s = 0; s < SB_MAX_SLOTS; s++)
    {
      char name[16];
      snprintf (name, sizeof name, "%u", s);
      int fd = openat (dfd, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
                       0600);
      if (fd < 0)
        return sr_fail (err, errno, "slot lock \"%s/%s\"", slots, name);
      if (flock (fd, LOCK_EX | LOCK_NB) == 0)
        {
          b->slot = s;
          b->slot_fd = fd;
          b->host_base = SB_HOST_ID_BASE + s * SB_ID_RANGE;
          return 0;
        }
      close (fd);
    }
  return sr_fail (err, EAGAIN, "every one of the %u sandbox slots is in use",
                  SB_MAX_SLOTS);
}

static char *
random_id (void)
{
  unsigned char r[6];
  if (getrandom (r, sizeof r, 0) != sizeof r)
    {
      uint64_t t
          = (uint64_t) sr_monotonic_ms () ^ ((uint64_t) getpid () << 20);
      memcpy (r, &t, sizeof r);
    }
  return xasprintf ("sandbox-%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3],
                    r[4], r[5]);
}

static int
mount_tmpfs (const char *path, uint64_t size, uid_t uid, gid_t gid,
             const char *mode, sr_error **err)
{
  _cleanup_free_ char *data
      = xasprintf ("size=%llu,mode=%s,uid=%u,gid=%u,nr_inodes=%llu",
                   (unsigned long long) size, mode, (unsigned) uid,
                   (unsigned) gid, (unsigned long long) (size / 4096 + 1024));
  if (mkdir_ok (path, 0700, err) < 0)
    return -1;
  if (mount ("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, data) < 0)
    return sr_fail (err, errno, "mount a tmpfs on \"%s\"", path);
  return 0;
}

static int
stat_workdir (const struct sb_options *o, struct sb_bundle *b, sr_error **err)
{
  struct stat st;
  b->work = realpath (o->workdir, NULL);
  if (b->work == NULL)
    return sr_fail (err, errno, "--workdir \"%s\"", o->workdir);
  if (stat (b->work, &st) < 0)
    return sr_fail (err, errno, "--workdir \"%s\"", o->workdir);
  if (!S_ISDIR (st.st_mode))
    return sr_fail (err, ENOTDIR, "--workdir \"%s\"", o->workdir);
  /* What the sandbox writes there lands as the owner's: never as root's
   * (a set-user-ID file of root's could be made). */
  if (st.st_uid == 0 || st.st_gid == 0)
    return sr_fail (
        err, 0,
        "--workdir \"%s\" is owned by root: the sandbox writes as "
        "the directory's owner, never as root; give it a directory "
        "of an unprivileged user and group",
        o->workdir);
  b->work_uid = st.st_uid;
  b->work_gid = st.st_gid;
  return 0;
}

static int
make_dirs (const struct sr_globals *g, const struct sb_options *o,
           struct sb_bundle *b, sr_error **err)
{
  _cleanup_free_ char *sbdir = state_dir (g);
  if (mkdir_ok (g->root, 0711, err) < 0 || mkdir_ok (sbdir, 0711, err) < 0)
    return -1;
  if (take_slot (sbdir, b, err) < 0)
    return -1;
  /* The directory appears with its lock held (made under another name,
   * then renamed), so that a concurrent reclaim never takes it for a dead
   * sandbox's. */
  for (int tries = 0;; tries++)
    {
      b->id = random_id ();
      b->dir = xasprintf ("%s/%s", sbdir, b->id);
      _cleanup_free_ char *tmp = xasprintf ("%s/.new-%s", sbdir, b->id);
      if (mkdir (tmp, 0711) < 0)
        return sr_fail (err, errno, "mkdir \"%s\"", tmp);
      _cleanup_free_ char *lock = xasprintf ("%s/" LOCK_FILE, tmp);
      b->lock_fd
          = open (lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (b->lock_fd < 0 || flock (b->lock_fd, LOCK_EX) < 0)
        {
          int e = errno;
          unlink (lock);
          rmdir (tmp);
          return sr_fail (err, e, "lock \"%s\"", lock);
        }
      if (renameat2 (AT_FDCWD, tmp, AT_FDCWD, b->dir, RENAME_NOREPLACE) == 0)
        break;
      int e = errno;
      unlink (lock);
      rmdir (tmp);
      sr_close (b->lock_fd);
      b->lock_fd = -1;
      if (e != EEXIST || tries > 8)
        return sr_fail (err, e, "rename to \"%s\"", b->dir);
      free (b->id);
      free (b->dir);
    }
  (void) o;
  return 0;
}

int
sb_bundle_create (const struct sr_globals *g, const struct sb_options *o,
                  struct sb_bundle *b, sr_error **err)
{
  uid_t user = 0;

  if (o->workdir != NULL && stat_workdir (o, b, err) < 0)
    return -1;
  if (private_mount_ns (err) < 0)
    return -1;
  sb_reclaim (g);
  if (make_dirs (g, o, b, err) < 0)
    return -1;
  user = sb_bundle_user_uid (b);
  b->scratch = xasprintf (SB_RUN_DIR "/%s", b->id);
  if (mkdir_ok (b->scratch, 0755, err) < 0)
    return -1;
  b->tmp = xasprintf ("%s/tmp", b->scratch);
  if (mount_tmpfs (b->tmp, o->tmp_size, 0, 0, "1777", err) < 0)
    return -1;
  if (o->workdir == NULL)
    {
      b->ephemeral_work = true;
      b->work = xasprintf ("%s/work", b->scratch);
      if (mount_tmpfs (b->work, o->disk, user, user, "0755", err) < 0)
        return -1;
      b->work_source = xstrdup (b->work);
    }
  else
    {
      b->work_source = xasprintf ("%s/workdir", b->scratch);
      if (mkdir_ok (b->work_source, 0755, err) < 0)
        return -1;
      if (mount (b->work, b->work_source, NULL, MS_BIND, NULL) < 0)
        return sr_fail (err, errno, "--workdir \"%s\": bind", o->workdir);
    }
  return sb_rootfs_make (o, b, err);
}

/* Unmount whatever is mounted under `dir` and remove the tree; only our
 * own directories are ever passed here. */
static void
remove_tree_at (int parent, const char *name, dev_t dev)
{
  struct stat st;
  int fd
      = openat (parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  /* Never into another file system: a mount left there is not ours to
   * empty. */
  if (fd >= 0 && (fstat (fd, &st) < 0 || st.st_dev != dev))
    {
      close (fd);
      fd = -1;
    }
  if (fd >= 0)
    {
      DIR *d = fdopendir (fd);
      struct dirent *de;
      if (d == NULL)
        close (fd);
      else
        {
          while ((de = readdir (d)) != NULL)
            if (strcmp (de->d_name, ".") != 0
                && strcmp (de->d_name, "..") != 0)
              {
                if (unlinkat (dirfd (d), de->d_name, 0) < 0 && errno == EISDIR)
                  remove_tree_at (dirfd (d), de->d_name, dev);
              }
          closedir (d);
        }
    }
  unlinkat (parent, name, AT_REMOVEDIR);
}

void
sb_bundle_remove_dir (const char *dir)
{
  static const char *const mounts[]
      = { "root", "root-upper", "work", "tmp", "binds", "workdir" };
  for (size_t i = 0; i < ARRAY_SIZE (mounts); i++)
    {
      _cleanup_free_ char *p = xasprintf ("%s/%s", dir, mounts[i]);
      while (umount2 (p, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
        ;
    }
  struct stat st;
  if (lstat (dir, &st) == 0 && S_ISDIR (st.st_mode))
    remove_tree_at (AT_FDCWD, dir, st.st_dev);
}

void
sb_bundle_destroy (struct sb_bundle *b)
{
  if (b->scratch != NULL)
    sb_bundle_remove_dir (b->scratch);
  if (b->dir != NULL && b->lock_fd >= 0)
    sb_bundle_remove_dir (b->dir);
  sr_close (b->lock_fd);
  sr_close (b->slot_fd);
  free (b->id);
  free (b->dir);
  free (b->scratch);
  free (b->rootfs);
  free (b->work);
  free (b->tmp);
  free (b->work_source);
  strv_free (b->host_paths);
  strv_free (b->bind_sources);
  memset (b, 0, sizeof *b);
  b->lock_fd = b->slot_fd = -1;
}

static void
reclaim_one (const struct sr_globals *g, int sbfd, const char *sbdir,
             const char *name)
{
  _cleanup_free_ char *lock = xasprintf ("%s/" LOCK_FILE, name);
  _cleanup_close_ int fd
      = openat (sbfd, lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 || flock (fd, LOCK_EX | LOCK_NB) < 0)
    return; /* alive, or being made (it locks before anything else) */
  /* Its container may be gone already (the watchdog deleted it). */
  sr_error *err = NULL;
  if (sr_container_delete (g, name, true, &err) < 0)
    {
      sr_log (SR_LOG_DEBUG, "sandbox: reclaim \"%s\": %s", name, err->msg);
      sr_error_free (err);
    }
  _cleanup_free_ char *dir = xasprintf ("%s/%s", sbdir, name);
  sb_bundle_remove_dir (dir);
}

void
sb_reclaim (const struct sr_globals *g)
{
  _cleanup_free_ char *sbdir = state_dir (g);
  int fd = open (sbdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return;
  DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return;
    }
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    if (str_has_prefix (de->d_name, "sandbox-"))
      reclaim_one (g, dirfd (d), sbdir, de->d_name);
  closedir (d);
}

int
sb_fs_usage (const char *path, uint64_t *used, uint64_t *avail)
{
  struct statfs sf;
  if (path == NULL || statfs (path, &sf) < 0)
    return -1;
  *used = (uint64_t) (sf.f_blocks - sf.f_bfree) * (uint64_t) sf.f_bsize;
  *avail = (uint64_t) sf.f_bavail * (uint64_t) sf.f_bsize;
  return 0;
}
