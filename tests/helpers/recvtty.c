/* recvtty: the engine's end of --console-socket, for the terminal tests (the
 * same job as runc's tests/cmd/recvtty).
 *
 *   recvtty SOCKET
 *
 * Listens on the unix socket SOCKET, accepts one connection, receives the pty
 * master over SCM_RIGHTS, then relays: the master's output to stdout, stdin
 * to the master.  Exits 0 when the pty closes (every slave fd gone), 1 on an
 * error; prints "recvtty: ..." on stderr for each step that fails.  */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void
die (const char *what)
{
  fprintf (stderr, "recvtty: %s: %s\n", what, strerror (errno));
  exit (1);
}

/* The socket appears under PATH only once it listens (bound under a
 * temporary name, then renamed), so a test waiting for PATH to exist never
 * connects too early.  */
static int
listen_on (const char *path)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int fd;

  if (strlen (path) + 4 >= sizeof addr.sun_path)
    {
      errno = ENAMETOOLONG;
      die (path);
    }
  snprintf (addr.sun_path, sizeof addr.sun_path, "%s.tmp", path);
  unlink (addr.sun_path);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    die ("socket");
  if (bind (fd, (struct sockaddr *) &addr, sizeof addr) < 0)
    die (addr.sun_path);
  if (listen (fd, 1) < 0)
    die ("listen");
  if (rename (addr.sun_path, path) < 0)
    die (path);
  return fd;
}

/* One fd in one SCM_RIGHTS message; anything else is an error.  */
static int
receive_fd (int conn)
{
  char data[256];
  union
  {
    struct cmsghdr align;
    char buf[CMSG_SPACE (sizeof (int) * 4)];
  } control;
  struct iovec iov = { .iov_base = data, .iov_len = sizeof data };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
                        .msg_control = control.buf,
                        .msg_controllen = sizeof control.buf };
  struct cmsghdr *cmsg;
  int fd;

  if (recvmsg (conn, &msg, MSG_CMSG_CLOEXEC) < 0)
    die ("recvmsg");
  cmsg = CMSG_FIRSTHDR (&msg);
  if (cmsg == NULL || cmsg->cmsg_level != SOL_SOCKET
      || cmsg->cmsg_type != SCM_RIGHTS
      || cmsg->cmsg_len != CMSG_LEN (sizeof (int)))
    {
      fprintf (stderr, "recvtty: expected exactly one fd in SCM_RIGHTS\n");
      exit (1);
    }
  memcpy (&fd, CMSG_DATA (cmsg), sizeof fd);
  return fd;
}

static int
copy (int from, int to)
{
  char buf[4096];
  ssize_t n, off = 0;

  do
    n = read (from, buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  if (n <= 0)
    return (int) n;
  while (off < n)
    {
      ssize_t w = write (to, buf + off, (size_t) (n - off));
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        return -1;
      off += w;
    }
  return 1;
}

int
main (int argc, char **argv)
{
  int lfd, conn, master, ptn;
  struct pollfd fds[2];

  if (argc != 2)
    {
      fprintf (stderr, "usage: recvtty SOCKET\n");
      return 2;
    }
  lfd = listen_on (argv[1]);
  conn = accept4 (lfd, NULL, NULL, SOCK_CLOEXEC);
  if (conn < 0)
    die ("accept");
  master = receive_fd (conn);
  close (conn);
  close (lfd);
  unlink (argv[1]);

  /* Only a pty master answers TIOCGPTN.  */
  if (ioctl (master, TIOCGPTN, &ptn) < 0)
    die ("the fd received is not a pty master");

  fds[0] = (struct pollfd){ .fd = master, .events = POLLIN };
  fds[1] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
  for (;;)
    {
      if (poll (fds, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          die ("poll");
        }
      if (fds[0].revents)
        {
          int r = copy (master, STDOUT_FILENO);
          /* EIO: the last slave fd closed, the container is gone.  */
          if (r == 0 || (r < 0 && errno == EIO))
            return 0;
          if (r < 0)
            die ("read pty");
        }
      if (fds[1].revents)
        {
          if (copy (STDIN_FILENO, master) <= 0)
            fds[1].fd = -1; /* stdin done: keep relaying output */
        }
    }
}
