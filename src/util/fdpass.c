/* Passing file descriptors over unix sockets (see fdpass.h). */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/fdpass.h"
#include "sandrun/util.h"

/* Room for more fds than we expect, so that a peer sending several is seen
 * (and its fds closed) rather than truncated. */
#define FDPASS_MAX_FDS 8

int
sr_send_fd (int sock, int fd, const void *data, size_t len, sr_error **err)
{
  char dummy = 0;
  struct iovec iov = { (void *) data, len };
  if (data == NULL || len == 0)
    iov = (struct iovec){ &dummy, 1 };

  union
  {
    struct cmsghdr align;
    char buf[CMSG_SPACE (sizeof (int))];
  } control;
  memset (&control, 0, sizeof control);
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
                        .msg_control = control.buf,
                        .msg_controllen = sizeof control.buf };
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c), &fd, sizeof fd);

  ssize_t n;
  do
    n = sendmsg (sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return sr_fail (err, errno, "send fd %d", fd);
  if ((size_t) n != iov.iov_len)
    return sr_fail (err, EMSGSIZE, "send fd %d: short send (%zd of %zu bytes)",
                    fd, n, iov.iov_len);
  return 0;
}

/* The fds of a received message: the first into *fd, the others closed. */
static void
take_fds (struct msghdr *msg, int *fd)
{
  for (struct cmsghdr *c = CMSG_FIRSTHDR (msg); c != NULL; c = CMSG_NXTHDR (msg, c))
    {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
        continue;
      size_t n = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
      for (size_t i = 0; i < n; i++)
        {
          int got;
          memcpy (&got, CMSG_DATA (c) + i * sizeof (int), sizeof got);
          if (*fd < 0)
            *fd = got;
          else
            sr_close (got);
        }
    }
}

int
sr_recv_fd (int sock, void *data, size_t len, sr_error **err)
{
  char dummy;
  struct iovec iov = { data, len };
  if (data == NULL || len == 0)
    iov = (struct iovec){ &dummy, 1 };

  union
  {
    struct cmsghdr align;
    char buf[CMSG_SPACE (FDPASS_MAX_FDS * sizeof (int))];
  } control;
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
                        .msg_control = control.buf,
                        .msg_controllen = sizeof control.buf };

  ssize_t n;
  do
    n = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return sr_fail (err, errno, "receive fd");

  _cleanup_close_ int fd = -1;
  take_fds (&msg, &fd);
  if (n == 0)
    return sr_fail (err, ECONNRESET, "receive fd: the peer closed the socket");
  if (msg.msg_flags & MSG_CTRUNC)
    return sr_fail (err, EMSGSIZE, "receive fd: control data truncated");
  /* A datagram longer than the caller's buffer: not the message expected. */
  if ((msg.msg_flags & MSG_TRUNC) && data != NULL && len > 0)
    return sr_fail (err, EMSGSIZE, "receive fd: message longer than %zu bytes",
                    len);
  if (fd < 0)
    return sr_fail (err, EBADMSG, "receive fd: the message carries none");
  return steal_fd (&fd);
}

/* "/proc/self/fd/N/NAME" standing for `path`, N an O_PATH fd of its
 * directory: for paths longer than sun_path. */
static char *
short_socket_path (const char *path, int *dirfd, sr_error **err)
{
  const char *slash = strrchr (path, '/');
  _cleanup_free_ char *dir = slash == NULL  ? xstrdup (".")
                             : slash == path ? xstrdup ("/")
                                             : xstrndup (path, (size_t) (slash - path));
  const char *base = slash == NULL ? path : slash + 1;

  *dirfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (*dirfd < 0)
    {
      sr_fail (err, errno, "open the directory of socket \"%s\"", path);
      return NULL;
    }
  return xasprintf ("/proc/self/fd/%d/%s", *dirfd, base);
}

int
sr_unix_connect (const char *path, sr_error **err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  _cleanup_close_ int dirfd = -1;
  _cleanup_free_ char *via = NULL;
  const char *target = path;

  if (*path == '\0')
    return sr_fail (err, EINVAL, "connect to socket: empty path");
  if (strlen (path) >= sizeof addr.sun_path)
    {
      via = short_socket_path (path, &dirfd, err);
      if (via == NULL)
        return -1;
      target = via;
    }
  if (strlen (target) >= sizeof addr.sun_path)
    return sr_fail (err, ENAMETOOLONG, "connect to socket \"%s\"", path);
  memcpy (addr.sun_path, target, strlen (target) + 1);

  _cleanup_close_ int sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return sr_fail (err, errno, "socket");
  /* No retry on EINTR: a connect interrupted goes on in the background. */
  if (connect (sock, (struct sockaddr *) &addr, sizeof addr) < 0)
    return sr_fail (err, errno, "connect to socket \"%s\"", path);
  return steal_fd (&sock);
}
