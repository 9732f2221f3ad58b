/* fdpass: SCM_RIGHTS round trips, extra fds, fd-less messages, connecting
 * to a unix socket by a path longer than sun_path. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/fdpass.h"
#include "util/safepath.h"
#include "sandrun/util.h"
#include "unit.h"

static int
errno_of (sr_error *err)
{
  int e = sr_error_errno (err);
  sr_error_free (err);
  return e;
}

static void
test_round_trip (int type)
{
  int sv[2], p[2];
  if (socketpair (AF_UNIX, type | SOCK_CLOEXEC, 0, sv) < 0 || pipe2 (p, O_CLOEXEC) < 0)
    exit (2);
  const char *kind = type == SOCK_STREAM ? "stream" : "seqpacket";

  sr_error *err = NULL;
  int r = sr_send_fd (sv[0], p[0], "hello", 5, &err);
  CHECK (r == 0, "%s: send", kind);
  sr_error_free (err);
  char buf[8] = "";
  err = NULL;
  int fd = sr_recv_fd (sv[1], buf, 5, &err);
  CHECK (fd >= 0 && sr_fd_same_inode (fd, p[0]) && fd != p[0],
         "%s: received the same pipe", kind);
  CHECK (fd >= 0 && (fcntl (fd, F_GETFD) & FD_CLOEXEC), "%s: received fd is CLOEXEC",
         kind);
  CHECK (memcmp (buf, "hello", 5) == 0, "%s: payload", kind);
  sr_error_free (err);
  sr_close (fd);

  /* No payload: one byte goes anyway. */
  err = NULL;
  r = sr_send_fd (sv[0], p[1], NULL, 0, &err);
  CHECK (r == 0, "%s: send, no payload", kind);
  sr_error_free (err);
  err = NULL;
  fd = sr_recv_fd (sv[1], NULL, 0, &err);
  CHECK (fd >= 0 && sr_fd_same_inode (fd, p[1]), "%s: receive, no payload", kind);
  sr_error_free (err);
  sr_close (fd);

  /* A message without an fd. */
  if (write (sv[0], "x", 1) != 1)
    exit (2);
  err = NULL;
  fd = sr_recv_fd (sv[1], buf, 1, &err);
  int e_EBADMSG = fd < 0 ? errno_of (err) : 0;
  CHECK (e_EBADMSG == EBADMSG, "%s: no fd is an error", kind);

  /* The peer is gone. */
  close (sv[0]);
  err = NULL;
  fd = sr_recv_fd (sv[1], buf, 1, &err);
  int e_ECONNRESET = fd < 0 ? errno_of (err) : 0;
  CHECK (e_ECONNRESET == ECONNRESET, "%s: EOF is an error", kind);

  close (sv[1]);
  close (p[0]);
  close (p[1]);
}

/* Several fds in one message: the first is taken, the rest closed. */
static void
test_extra_fds (void)
{
  int sv[2], p[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0
      || pipe2 (p, O_CLOEXEC) < 0)
    exit (2);

  int fds[3] = { p[0], p[1], p[1] };
  char control[CMSG_SPACE (sizeof fds)];
  memset (control, 0, sizeof control);
  char byte = 'x';
  struct iovec iov = { &byte, 1 };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                        .msg_controllen = sizeof control };
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof fds);
  memcpy (CMSG_DATA (c), fds, sizeof fds);
  if (sendmsg (sv[0], &msg, 0) != 1)
    exit (2);

  /* The write end travels twice and is closed twice by sr_recv_fd: once
     our own p[1] is closed too, the pipe has no writer left. */
  sr_error *err = NULL;
  int fd = sr_recv_fd (sv[1], NULL, 0, &err);
  CHECK (fd >= 0 && sr_fd_same_inode (fd, p[0]), "extra fds: the first is returned");
  sr_error_free (err);
  close (p[1]);
  char b;
  CHECK (fd >= 0 && read (fd, &b, 1) == 0, "extra fds: the others are closed");
  sr_close (fd);
  close (p[0]);
  close (sv[0]);
  close (sv[1]);
}

static void
test_connect (void)
{
  char dir[] = "/tmp/sr-fdpass-XXXXXX";
  if (mkdtemp (dir) == NULL)
    exit (2);
  char *sub = xasprintf ("%s/%0120d", dir, 0);
  char *path = xasprintf ("%s/sock", sub);
  if (mkdir (sub, 0700) < 0)
    exit (2);

  /* bind() to the long path through the same trick, done by hand. */
  int dfd = open (sub, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  snprintf (addr.sun_path, sizeof addr.sun_path, "/proc/self/fd/%d/sock", dfd);
  int lsock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (bind (lsock, (struct sockaddr *) &addr, sizeof addr) < 0 || listen (lsock, 1) < 0)
    exit (2);

  sr_error *err = NULL;
  int fd = sr_unix_connect (path, &err);
  int peer = fd >= 0 ? accept4 (lsock, NULL, NULL, SOCK_CLOEXEC) : -1;
  CHECK (fd >= 0 && peer >= 0, "connect to a path longer than sun_path (%zu)",
         strlen (path));
  CHECK (fd < 0 || (fcntl (fd, F_GETFD) & FD_CLOEXEC), "socket is CLOEXEC");
  sr_error_free (err);
  sr_close (fd);
  sr_close (peer);

  err = NULL;
  char *missing = xasprintf ("%s/nosock", dir);
  fd = sr_unix_connect (missing, &err);
  int e_ENOENT = fd < 0 ? errno_of (err) : 0;
  CHECK (e_ENOENT == ENOENT, "connect to a missing socket");

  close (lsock);
  close (dfd);
  unlink (path);
  rmdir (sub);
  rmdir (dir);
  free (missing);
  free (path);
  free (sub);
}

int
main (void)
{
  test_round_trip (SOCK_STREAM);
  test_round_trip (SOCK_SEQPACKET);
  test_extra_fds ();
  test_connect ();
  return unit_finish ();
}
