/* recvtty SOCKET: the other end of --console-socket, for the tests.
 *
 * Listens on the unix socket SOCKET, accepts one connection, receives the
 * pty master the runtime sends with SCM_RIGHTS, prints the payload that came
 * with it to stderr ("recvtty: got master, payload ..."), then relays stdin
 * to the master and the master to stdout until the pty closes (EIO once the
 * last slave is gone).  Exits 0 after a relay, 1 on any error. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int
die (const char *what)
{
  fprintf (stderr, "recvtty: %s: %s\n", what, strerror (errno));
  exit (1);
}

static int
listen_on (const char *path)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (fd < 0)
    die ("socket");
  if (strlen (path) >= sizeof addr.sun_path)
    {
      errno = ENAMETOOLONG;
      die (path);
    }
  strcpy (addr.sun_path, path);
  unlink (path);
  if (bind (fd, (struct sockaddr *) &addr, sizeof addr) < 0 || listen (fd, 1) < 0)
    die (path);
  return fd;
}

static int
receive_master (int conn)
{
  char payload[256] = { 0 };
  char cbuf[CMSG_SPACE (sizeof (int))];
  struct iovec iov = { payload, sizeof payload - 1 };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                       .msg_controllen = sizeof cbuf };
  int master = -1;

  if (recvmsg (conn, &mh, MSG_CMSG_CLOEXEC) < 0)
    die ("recvmsg");
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&mh); c != NULL; c = CMSG_NXTHDR (&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      memcpy (&master, CMSG_DATA (c), sizeof master);
  if (master < 0)
    {
      errno = EBADMSG;
      die ("no fd received");
    }
  fprintf (stderr, "recvtty: got master, payload \"%s\"\n", payload);
  return master;
}

/* Copy what is readable; 0 at EOF or EIO. */
static int
copy (int from, int to)
{
  char buf[4096];
  ssize_t n = read (from, buf, sizeof buf);
  if (n < 0 && errno == EINTR)
    return 1;
  if (n <= 0)
    return 0;
  for (ssize_t done = 0; done < n;)
    {
      ssize_t w = write (to, buf + done, (size_t) (n - done));
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        return 0;
      done += w;
    }
  return 1;
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: recvtty SOCKET\n");
      return 2;
    }
  int lfd = listen_on (argv[1]);
  int conn = accept4 (lfd, NULL, NULL, SOCK_CLOEXEC);
  if (conn < 0)
    die ("accept");
  int master = receive_master (conn);
  close (conn);
  close (lfd);

  int in_open = 1;
  for (;;)
    {
      struct pollfd fds[2] = { { master, POLLIN, 0 }, { in_open ? 0 : -1, POLLIN, 0 } };
      if (poll (fds, 2, -1) < 0 && errno != EINTR)
        die ("poll");
      if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) && !copy (master, 1))
        break;
      if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) && !copy (0, master))
        in_open = 0;
    }
  return 0;
}
