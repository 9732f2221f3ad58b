/* seccomp_listener: the agent at a container's linux.seccomp.listenerPath.
 *
 *   seccomp_listener SOCKET STATE_FILE VALUE
 *
 * Listens on the unix socket SOCKET, takes one connection, and receives
 * the seccomp notification fd (SCM_RIGHTS) with the container process
 * state JSON as payload (read to EOF), which it writes to STATE_FILE (via
 * a temporary file and rename: once STATE_FILE exists it is complete).
 * Then it answers every notification as if the syscall had returned
 * VALUE, until the filter has no task left.  On stdout:
 *   listening                   the socket is ready
 *   fds N                       SCM_RIGHTS carried N fds
 *   fd TARGET                   what the (first) fd is, from /proc
 *   notify syscall=NR pid=PID arg0=A   one line per notification
 *   hangup                      no task uses the filter any more */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_FDS 8
#define MAX_STATE (1 << 20)

static void
die (const char *what)
{
  fprintf (stderr, "seccomp_listener: %s: %s\n", what, strerror (errno));
  exit (1);
}

static int
listen_on (const char *path)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (s < 0)
    die ("socket");
  if (strlen (path) >= sizeof sa.sun_path)
    {
      errno = ENAMETOOLONG;
      die (path);
    }
  strcpy (sa.sun_path, path);
  if (bind (s, (struct sockaddr *) &sa, sizeof sa) < 0)
    die (path);
  if (listen (s, 1) < 0)
    die ("listen");
  return s;
}

/* The first message carries the fds; the rest of the payload follows until
 * the runtime closes its end.  Returns the first fd, the payload in buf. */
static int
receive (int conn, char *buf, size_t size, size_t *len)
{
  union
  {
    struct cmsghdr h;
    char b[CMSG_SPACE (MAX_FDS * sizeof (int))];
  } ctl;
  struct iovec iov = { .iov_base = buf, .iov_len = size };
  struct msghdr msg = { .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = ctl.b,
                        .msg_controllen = sizeof ctl.b };
  struct cmsghdr *c;
  int fd = -1, nfds = 0;
  ssize_t n;

  n = recvmsg (conn, &msg, MSG_CMSG_CLOEXEC);
  if (n < 0)
    die ("recvmsg");
  for (c = CMSG_FIRSTHDR (&msg); c != NULL; c = CMSG_NXTHDR (&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      {
        int k = (int) ((c->cmsg_len - CMSG_LEN (0)) / sizeof (int));
        if (fd < 0 && k > 0)
          memcpy (&fd, CMSG_DATA (c), sizeof fd);
        nfds += k;
      }
  printf ("fds %d%s\n", nfds,
          (msg.msg_flags & MSG_CTRUNC) ? " (truncated)" : "");
  *len = (size_t) n;
  while (*len < size && (n = read (conn, buf + *len, size - *len)) > 0)
    *len += (size_t) n;
  if (n < 0)
    die ("read");
  return fd;
}

static void
save_state (const char *path, const char *buf, size_t len)
{
  char tmp[4096];
  FILE *f;

  snprintf (tmp, sizeof tmp, "%s.tmp", path);
  f = fopen (tmp, "we");
  if (f == NULL || fwrite (buf, 1, len, f) != len || fclose (f) != 0)
    die (tmp);
  if (rename (tmp, path) < 0)
    die (path);
}

static void
describe_fd (int fd)
{
  char link[64], target[256];
  ssize_t n;

  snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
  n = readlink (link, target, sizeof target - 1);
  target[n < 0 ? 0 : n] = '\0';
  printf ("fd %s\n", target);
}

/* Answer every notification with `value` until the filter is orphaned. */
static void
serve (int fd, long long value)
{
  struct seccomp_notif_sizes sizes;
  struct seccomp_notif *req;
  struct seccomp_notif_resp *resp;

  if (syscall (SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
    die ("SECCOMP_GET_NOTIF_SIZES");
  /* The kernel's structures may be bigger than the headers'. */
  req = calloc (1, sizes.seccomp_notif > sizeof *req ? sizes.seccomp_notif
                                                     : sizeof *req);
  resp = calloc (1, sizes.seccomp_notif_resp > sizeof *resp
                        ? sizes.seccomp_notif_resp
                        : sizeof *resp);
  if (req == NULL || resp == NULL)
    die ("calloc");

  for (;;)
    {
      struct pollfd p = { .fd = fd, .events = POLLIN };

      if (poll (&p, 1, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          die ("poll");
        }
      if (!(p.revents & POLLIN))
        break;
      memset (req, 0, sizes.seccomp_notif);
      if (ioctl (fd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
        {
          if (errno == EINTR || errno == ENOENT)
            continue;
          die ("SECCOMP_IOCTL_NOTIF_RECV");
        }
      printf ("notify syscall=%d pid=%u arg0=%llu\n", req->data.nr, req->pid,
              (unsigned long long) req->data.args[0]);
      fflush (stdout);
      memset (resp, 0, sizes.seccomp_notif_resp);
      resp->id = req->id;
      resp->val = value;
      /* ENOENT: the task was killed meanwhile; nothing to answer. */
      if (ioctl (fd, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT)
        die ("SECCOMP_IOCTL_NOTIF_SEND");
    }
  printf ("hangup\n");
  free (req);
  free (resp);
}

int
main (int argc, char **argv)
{
  static char state[MAX_STATE];
  size_t len = 0;
  int s, conn, fd;

  if (argc != 4)
    {
      fprintf (stderr, "usage: seccomp_listener SOCKET STATE_FILE VALUE\n");
      return 2;
    }
  setvbuf (stdout, NULL, _IOLBF, 0);
  s = listen_on (argv[1]);
  printf ("listening\n");
  conn = accept4 (s, NULL, NULL, SOCK_CLOEXEC);
  if (conn < 0)
    die ("accept");
  fd = receive (conn, state, sizeof state, &len);
  close (conn);
  close (s);
  unlink (argv[1]);
  if (fd < 0)
    {
      fprintf (stderr, "seccomp_listener: no fd received\n");
      save_state (argv[2], state, len);
      return 1;
    }
  describe_fd (fd);
  save_state (argv[2], state, len);
  serve (fd, atoll (argv[3]));
  return 0;
}
