/* `sandbox cp`: files in and out of a session's /work and /tmp.  The path
 * in the session is resolved with openat2 RESOLVE_IN_ROOT from the
 * directory behind /work or /tmp: a symlink the sandboxed code made is
 * followed, if at all, inside that directory, never out to the host. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "session.h"
#include "sandrun/util.h"

#define COPY_MAX (1ULL << 30)

int
sb_session_openat (const struct sb_session *s, const char *path, int flags,
                   mode_t mode, sr_error **err)
{
  const char *top = NULL, *rest = NULL;

  /* A relative path is the working directory's, as inside the sandbox. */
  if (path[0] != '/')
    top = s->b.work, rest = path;
  else if (str_has_prefix (path, "/work/"))
    top = s->b.work, rest = path + 6;
  else if (str_has_prefix (path, "/tmp/"))
    top = s->b.tmp, rest = path + 5;
  if (top == NULL || *rest == '\0')
    return sr_fail (err, EPERM,
                    "\"%s\": only files under /work and /tmp can be copied",
                    path);
  _cleanup_close_ int root = open (top, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return sr_fail (err, errno, "open \"%s\"", top);
  struct open_how how = { .flags = (uint64_t) (flags | O_CLOEXEC | O_NOFOLLOW),
                          .mode = (flags & O_CREAT) ? mode : 0,
                          .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS
                                     | RESOLVE_NO_XDEV };
  int fd = (int) syscall (SYS_openat2, root, rest, &how, sizeof how);
  if (fd < 0)
    return sr_fail (err, errno, "\"%s\" in session \"%s\"", path, s->name);
  return fd;
}

static int
copy_fd (int from, int to, const char *what, sr_error **err)
{
  char buf[65536];
  uint64_t total = 0;
  ssize_t n;
  while ((n = read (from, buf, sizeof buf)) > 0)
    {
      total += (uint64_t) n;
      if (total > COPY_MAX)
        return sr_fail (err, EFBIG, "%s: larger than 1 GiB", what);
      if (sr_write_all (to, buf, (size_t) n) < 0)
        return sr_fail (err, errno, "%s: write", what);
    }
  if (n < 0)
    return sr_fail (err, errno, "%s: read", what);
  return 0;
}

/* Who owns a file the caller copies in: the sandbox user, as seen from
 * the host (the --workdir's owner when it is mapped onto it). */
static void
owner (const struct sb_session *s, const char *path, uid_t *uid, gid_t *gid)
{
  if (str_has_prefix (path, "/work/") && !s->b.ephemeral_work)
    {
      *uid = s->b.work_uid;
      *gid = s->b.work_gid;
      return;
    }
  *uid = *gid = sb_bundle_user_uid (&s->b);
}

int
sb_session_cp (const struct sb_session *s, const char *src, const char *dst,
               bool to_session, sr_error **err)
{
  if (to_session)
    {
      _cleanup_close_ int in = open (src, O_RDONLY | O_CLOEXEC);
      struct stat st;
      if (in < 0 || fstat (in, &st) < 0)
        return sr_fail (err, errno, "\"%s\"", src);
      if (!S_ISREG (st.st_mode))
        return sr_fail (err, EINVAL, "\"%s\": not a regular file", src);
      _cleanup_close_ int out = sb_session_openat (
          s, dst, O_WRONLY | O_CREAT | O_TRUNC, 0644, err);
      if (out < 0)
        return -1;
      struct stat ost;
      if (fstat (out, &ost) < 0 || !S_ISREG (ost.st_mode))
        return sr_fail (err, EINVAL, "\"%s\": not a regular file", dst);
      uid_t uid;
      gid_t gid;
      owner (s, dst, &uid, &gid);
      if (fchown (out, uid, gid) < 0)
        return sr_fail (err, errno, "\"%s\": chown", dst);
      return copy_fd (in, out, dst, err);
    }
  _cleanup_close_ int in
      = sb_session_openat (s, src, O_RDONLY | O_NONBLOCK, 0, err);
  if (in < 0)
    return -1;
  struct stat st;
  if (fstat (in, &st) < 0 || !S_ISREG (st.st_mode))
    return sr_fail (err, EINVAL, "\"%s\": not a regular file", src);
  _cleanup_close_ int out
      = open (dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0)
    return sr_fail (err, errno, "\"%s\"", dst);
  return copy_fd (in, out, src, err);
}
