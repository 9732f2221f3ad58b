/* Executions started by the session's supervisor (see session_spawn.h).
 *
 * The client sends a header with its stdio fds attached, then the command
 * as NUL-terminated entries ("a" argument, "e" environment, "c" working
 * directory).  The worker answers with two fixed-size replies: "started"
 * (a pidfd attached) or "failed" (errno and message), then "exited". */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "session_spawn.h"
#include "sandrun/exec.h"
#include "sandrun/util.h"

#define MAGIC 0x58535253u      /* "SRSX" */
#define MAX_REQUEST (4u << 20) /* the command and its environment */
#define REQUEST_WAIT_MS 10000  /* a client that connects and says nothing */
#define MAX_FDS 4

struct header
{
  uint32_t magic, len, nfds;
};

enum reply_kind
{
  REPLY_STARTED = 1,
  REPLY_FAILED,
  REPLY_EXITED
};

struct reply
{
  int32_t kind;
  int32_t pid;                       /* started */
  int32_t error;                     /* failed: errno */
  int32_t code, signal, core_dumped; /* exited */
  char msg[1024];                    /* failed */
};

static char *
socket_path (const char *dir)
{
  return xasprintf ("%s/" SB_SPAWN_SOCKET, dir);
}

static int
socket_addr (const char *dir, struct sockaddr_un *a, sr_error **err)
{
  _cleanup_free_ char *path = socket_path (dir);
  memset (a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  if (strlen (path) >= sizeof a->sun_path)
    return sr_fail (err, ENAMETOOLONG, "socket path \"%s\" is too long", path);
  strcpy (a->sun_path, path);
  return 0;
}

int
sb_spawn_listen (const char *dir, sr_error **err)
{
  struct sockaddr_un a;
  if (socket_addr (dir, &a, err) < 0)
    return -1;
  _cleanup_close_ int fd
      = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0 || bind (fd, (struct sockaddr *) &a, sizeof a) < 0
      || listen (fd, 64) < 0)
    return sr_fail (err, errno, "listen on \"%s\"", a.sun_path);
  int r = fd;
  fd = -1;
  return r;
}

/* ---- both sides ------------------------------------------------------------ */

static int
send_with_fds (int sock, const void *buf, size_t len, const int *fds,
               size_t nfds)
{
  char control[CMSG_SPACE (MAX_FDS * sizeof (int))];
  struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (nfds > 0)
    {
      memset (control, 0, sizeof control);
      m.msg_control = control;
      m.msg_controllen = CMSG_SPACE (nfds * sizeof (int));
      struct cmsghdr *c = CMSG_FIRSTHDR (&m);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (nfds * sizeof (int));
      memcpy (CMSG_DATA (c), fds, nfds * sizeof (int));
    }
  ssize_t n;
  do
    n = sendmsg (sock, &m, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -1;
  /* The rest, if the socket took only part (the fds went with it). */
  if ((size_t) n < len
      && sr_write_all (sock, (const char *) buf + n, len - (size_t) n) < 0)
    return -1;
  return 0;
}

/* Read exactly `len` bytes; fds that come with them (at most `max`) into
 * fds[], the rest closed.  0 at a clean EOF before anything. */
static ssize_t
recv_with_fds (int sock, void *buf, size_t len, int *fds, size_t max,
               size_t *nfds)
{
  size_t got = 0;
  if (nfds != NULL)
    *nfds = 0;
  while (got < len)
    {
      char control[CMSG_SPACE (MAX_FDS * sizeof (int))];
      struct iovec iov
          = { .iov_base = (char *) buf + got, .iov_len = len - got };
      struct msghdr m = { .msg_iov = &iov,
                          .msg_iovlen = 1,
                          .msg_control = control,
                          .msg_controllen = sizeof control };
      ssize_t n = recvmsg (sock, &m, MSG_CMSG_CLOEXEC);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -1;
      for (struct cmsghdr *c = CMSG_FIRSTHDR (&m); c != NULL;
           c = CMSG_NXTHDR (&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
          {
            size_t k = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
            int *in = (int *) CMSG_DATA (c);
            for (size_t i = 0; i < k; i++)
              if (nfds != NULL && *nfds < max)
                fds[(*nfds)++] = in[i];
              else
                close (in[i]);
          }
      if (n == 0)
        {
          if (got == 0)
            return 0;
          errno = EPIPE;
          return -1;
        }
      got += (size_t) n;
    }
  return (ssize_t) got;
}

/* ---- the worker (a child of the supervisor) ------------------------------- */

static void
reply_failed (int conn, int e, const char *msg)
{
  struct reply r = { .kind = REPLY_FAILED, .error = e };
  snprintf (r.msg, sizeof r.msg, "%s", msg);
  send_with_fds (conn, &r, sizeof r, NULL, 0);
}

/* The request: its header and fds, then the entries (hostile only in size:
 * the client is root, but a broken one must not wedge the worker). */
static int
read_request (int conn, int *fds, size_t *nfds, char **buf, size_t *len,
              sr_error **err)
{
  struct header h;
  struct pollfd p = { .fd = conn, .events = POLLIN };
  if (poll (&p, 1, REQUEST_WAIT_MS) <= 0)
    return sr_fail (err, ETIMEDOUT, "no request");
  if (recv_with_fds (conn, &h, sizeof h, fds, MAX_FDS, nfds) <= 0)
    return sr_fail (err, errno ? errno : EPIPE, "read the request");
  if (h.magic != MAGIC || h.len > MAX_REQUEST || h.nfds != *nfds || h.nfds < 3)
    return sr_fail (err, EPROTO, "malformed request");
  *buf = xmalloc (h.len + 1);
  if (h.len > 0 && recv_with_fds (conn, *buf, h.len, NULL, 0, NULL) <= 0)
    return sr_fail (err, errno ? errno : EPIPE, "read the request");
  (*buf)[h.len] = '\0';
  *len = h.len;
  return 0;
}

/* The received fds become 0, 1, 2 (and 3), the connection moved out of
 * their way.  The supervisor's other fds are left alone (close-on-exec:
 * the exec marks every fd so before execve; and some are the core's own,
 * such as its procfs handle). */
static int
arrange_fds (int *conn, const int *fds, size_t nfds)
{
  int c = fcntl (*conn, F_DUPFD_CLOEXEC, 64);
  if (c < 0)
    return -1;
  close (*conn);
  *conn = c;
  for (size_t i = 0; i < nfds; i++)
    {
      if (dup2 (fds[i], (int) i) < 0)
        return -1;
      /* Received fds are above 2 (the supervisor's stdio is /dev/null):
       * one at 3 is overwritten only after it was moved. */
      if (fds[i] >= (int) nfds)
        close (fds[i]);
    }
  return 0;
}

/* What to kill with the process if the client goes away. */
struct sweep
{
  bool on;
  pid_t *keep;
  size_t n_keep;
};

static void
parse_request (const char *buf, size_t len, struct sr_exec_opts *eo,
               struct sweep *sw)
{
  for (const char *p = buf; p < buf + len; p += strlen (p) + 1)
    if (p[0] == 'a')
      strv_append (&eo->args, p + 1);
    else if (p[0] == 'e')
      strv_append (&eo->env, p + 1);
    else if (p[0] == 'c' && eo->cwd == NULL)
      eo->cwd = p + 1;
    else if (p[0] == 's')
      sw->on = true;
    else if (p[0] == 'k')
      {
        sw->keep = xrealloc (sw->keep, (sw->n_keep + 1) * sizeof *sw->keep);
        sw->keep[sw->n_keep++] = (pid_t) atoi (p + 1);
      }
}

void
sb_spawn_kill_new (const struct sr_globals *g, const char *id,
                   const pid_t *old, size_t n_old)
{
  for (int round = 0; round < 50; round++)
    {
      _cleanup_free_ pid_t *pids = NULL;
      size_t n = 0, killed = 0;
      sr_error *err = NULL;
      if (sr_container_pids (g, id, &pids, &n, &err) < 0)
        {
          sr_error_free (err);
          return;
        }
      for (size_t i = 0; i < n; i++)
        {
          bool was_there = false;
          for (size_t j = 0; j < n_old && !was_there; j++)
            was_there = old[j] == pids[i];
          if (!was_there && kill (pids[i], SIGKILL) == 0)
            killed++;
        }
      if (killed == 0)
        return;
      usleep (2000);
    }
}

static int
start (const struct sr_globals *g, const char *id,
       const sr_exec_prepared *prep, struct sr_exec_opts *eo, int conn,
       sr_error **err)
{
  pid_t pid = -1;
  int status = 0;

  eo->detach = true;
  eo->pid = &pid;
  if (prep != NULL ? sr_exec_prepared_run (prep, eo, &status, err) < 0
                   : sr_container_exec (g, id, eo, &status, err) < 0)
    return -1;
  /* Our child (the exec's intermediate cloned it with CLONE_PARENT): the
   * pid cannot be reused before we reap it. */
  _cleanup_close_ int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (pidfd < 0)
    return sr_fail (err, errno, "pidfd_open %d", (int) pid);
  struct reply rp = { .kind = REPLY_STARTED, .pid = pid };
  if (send_with_fds (conn, &rp, sizeof rp, &pidfd, 1) < 0)
    {
      kill (pid, SIGKILL);
      return sr_fail (err, errno, "send the pidfd");
    }
  int keep = pidfd;
  pidfd = -1;
  return keep;
}

/* Until the process ends; a client that goes away first takes it along,
 * and with a sweep what it started. */
static void
watch (const struct sr_globals *g, const char *id, int conn, int pidfd,
       const struct sweep *sw)
{
  struct sr_exit ex = { .code = -1, .signal = SIGKILL };
  _cleanup_error_ sr_error *err = NULL;
  for (;;)
    {
      struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN },
                             { .fd = conn, .events = POLLIN } };
      if (poll (p, 2, -1) < 0 && errno != EINTR)
        break;
      if (p[0].revents)
        break;
      char c;
      if (p[1].revents && recv (conn, &c, 1, MSG_DONTWAIT) <= 0)
        {
          syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
          if (sw->on)
            sb_spawn_kill_new (g, id, sw->keep, sw->n_keep);
          break;
        }
    }
  if (sr_wait_exit (pidfd, -1, &ex, &err) < 0)
    ex = (struct sr_exit){ .code = -1, .signal = SIGKILL };
  struct reply r = { .kind = REPLY_EXITED,
                     .code = ex.code,
                     .signal = ex.signal,
                     .core_dumped = ex.core_dumped };
  send_with_fds (conn, &r, sizeof r, NULL, 0);
}

static __attribute__ ((noreturn)) void
serve (const struct sr_globals *g, const char *id,
       const sr_exec_prepared *prep, int conn)
{
  int fds[MAX_FDS];
  size_t nfds = 0;
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  _cleanup_error_ sr_error *err = NULL;
  struct sr_exec_opts eo = { 0 };
  struct sweep sw = { 0 };
  sigset_t none;

  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  signal (SIGPIPE, SIG_IGN);
  if (read_request (conn, fds, &nfds, &buf, &len, &err) < 0
      || arrange_fds (&conn, fds, nfds) < 0)
    {
      reply_failed (conn, err ? sr_error_errno (err) : errno,
                    err ? err->msg : "arrange the fds");
      _exit (1);
    }
  parse_request (buf, len, &eo, &sw);
  eo.preserve_fds = nfds > 3 ? (int) nfds - 3 : 0;
  int pidfd = eo.args == NULL ? sr_fail (&err, EINVAL, "no command")
                              : start (g, id, prep, &eo, conn, &err);
  if (pidfd < 0)
    {
      reply_failed (conn, sr_error_errno (err), err->msg);
      _exit (1);
    }
  watch (g, id, conn, pidfd, &sw);
  _exit (0);
}

void
sb_spawn_accept (const struct sr_globals *g, const char *id, int listen_fd,
                 sr_exec_prepared **prep)
{
  int conn = accept4 (listen_fd, NULL, NULL, SOCK_CLOEXEC);
  if (conn < 0)
    return;
  /* Loaded once, on the first execution; without it (the container is
   * gone) the worker's own exec says why. */
  if (*prep == NULL)
    {
      sr_error *err = NULL;
      if (sr_exec_prepare (g, id, prep, &err) < 0)
        sr_error_free (err);
    }
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (listen_fd);
      serve (g, id, *prep, conn);
    }
  close (conn);
}

/* ---- the client ------------------------------------------------------------ */

static void
put (char **buf, size_t *len, char tag, const char *s)
{
  size_t n = strlen (s) + 2;
  *buf = xrealloc (*buf, *len + n);
  (*buf)[*len] = tag;
  memcpy (*buf + *len + 1, s, n - 1);
  *len += n;
}

static char *
encode (const struct sb_spawn_request *rq, size_t *len)
{
  char *buf = NULL;
  *len = 0;
  for (size_t i = 0; rq->args != NULL && rq->args[i] != NULL; i++)
    put (&buf, len, 'a', rq->args[i]);
  for (size_t i = 0; rq->env != NULL && rq->env[i] != NULL; i++)
    put (&buf, len, 'e', rq->env[i]);
  if (rq->cwd != NULL)
    put (&buf, len, 'c', rq->cwd);
  if (rq->sweep)
    put (&buf, len, 's', "");
  for (size_t i = 0; rq->sweep && i < rq->n_keep; i++)
    {
      char n[16];
      snprintf (n, sizeof n, "%d", (int) rq->keep[i]);
      put (&buf, len, 'k', n);
    }
  return buf;
}

static int
connect_supervisor (const char *dir, sr_error **err)
{
  struct sockaddr_un a;
  if (socket_addr (dir, &a, err) < 0)
    return -1;
  _cleanup_close_ int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect (fd, (struct sockaddr *) &a, sizeof a) < 0)
    return sr_fail (err, errno, "connect to the session's supervisor");
  int r = fd;
  fd = -1;
  return r;
}

int
sb_spawn_start (const char *dir, const struct sb_spawn_request *rq, int *conn,
                pid_t *pid, int *pidfd, sr_error **err)
{
  size_t len = 0, nfds = rq->fds[3] >= 0 ? 4 : 3;
  _cleanup_free_ char *buf = encode (rq, &len);
  struct header h
      = { .magic = MAGIC, .len = (uint32_t) len, .nfds = (uint32_t) nfds };
  struct reply r;
  int got[1];
  size_t ngot = 0;

  if (len > MAX_REQUEST)
    return sr_fail (err, E2BIG,
                    "the command and its environment exceed %u bytes",
                    MAX_REQUEST);
  *conn = connect_supervisor (dir, err);
  if (*conn < 0)
    return -1;
  if (send_with_fds (*conn, &h, sizeof h, rq->fds, nfds) < 0
      || (len > 0 && sr_write_all (*conn, buf, len) < 0))
    return sr_fail (err, errno, "send the command to the session");
  if (recv_with_fds (*conn, &r, sizeof r, got, 1, &ngot) <= 0)
    return sr_fail (err, EPIPE, "the session's supervisor did not answer");
  if (r.kind == REPLY_FAILED)
    {
      /* The worker's error as it was: its message has its strerror. */
      r.msg[sizeof r.msg - 1] = '\0';
      sr_fail (err, 0, "%s", r.msg);
      (*err)->errnum = r.error;
      return -1;
    }
  if (r.kind != REPLY_STARTED || ngot != 1)
    {
      for (size_t i = 0; i < ngot; i++)
        close (got[i]);
      return sr_fail (err, EPROTO, "unexpected answer from the session");
    }
  *pid = r.pid;
  *pidfd = got[0];
  return 0;
}

int
sb_spawn_wait (int conn, struct sr_exit *ex, sr_error **err)
{
  struct reply r;
  if (recv_with_fds (conn, &r, sizeof r, NULL, 0, NULL) <= 0
      || r.kind != REPLY_EXITED)
    return sr_fail (err, EPIPE,
                    "the session's supervisor did not report "
                    "the exit status");
  ex->code = r.code;
  ex->signal = r.signal;
  ex->core_dumped = r.core_dumped != 0;
  return 0;
}
