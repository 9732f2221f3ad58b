#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/fdpass.h"
#include "core/sync.h"
#include "sandrun/util.h"

int
sr_sync_send (int sock, enum sr_sync_type type, int32_t value,
              const char *text, sr_error **err)
{
  size_t len = text != NULL ? strlen (text) : 0;
  if (len > SR_SYNC_MAX_TEXT)
    len = SR_SYNC_MAX_TEXT;

  struct sr_sync_hdr hdr = { SR_SYNC_VERSION, (uint16_t) type, value, (uint32_t) len };
  struct iovec iov[2] = { { &hdr, sizeof hdr }, { (void *) text, len } };
  struct msghdr mh = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };

  ssize_t r;
  do
    r = sendmsg (sock, &mh, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return sr_fail (err, errno, "sync: send");
  return 0;
}

int
sr_sync_send_fd (int sock, int32_t kind, int fd, sr_error **err)
{
  struct sr_sync_hdr hdr = { SR_SYNC_VERSION, SR_SYNC_FD, kind, 0 };
  return sr_send_fd (sock, fd, &hdr, sizeof hdr, err);
}

static int
recv_message (int sock, struct sr_sync_msg *msg, sr_error **err)
{
  char buf[sizeof (struct sr_sync_hdr) + SR_SYNC_MAX_TEXT];
  char cbuf[CMSG_SPACE (sizeof (int))];
  struct iovec iov = { buf, sizeof buf };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
                       .msg_control = cbuf, .msg_controllen = sizeof cbuf };
  ssize_t r;

  do
    r = recvmsg (sock, &mh, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return sr_fail (err, errno, "sync: receive");
  if (r == 0)
    return sr_fail (err, EPIPE, "sync: the other side exited");
  if ((size_t) r < sizeof msg->hdr)
    return sr_fail (err, EPROTO, "sync: short message");

  memcpy (&msg->hdr, buf, sizeof msg->hdr);
  msg->fd = -1;
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&mh); c != NULL; c = CMSG_NXTHDR (&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      memcpy (&msg->fd, CMSG_DATA (c), sizeof (int));

  if (msg->hdr.version != SR_SYNC_VERSION
      || msg->hdr.len != (size_t) r - sizeof msg->hdr)
    {
      sr_close (msg->fd);
      return sr_fail (err, EPROTO, "sync: malformed message");
    }
  memcpy (msg->text, buf + sizeof msg->hdr, msg->hdr.len);
  msg->text[msg->hdr.len] = '\0';
  return 0;
}

int
sr_sync_recv (int sock, struct sr_sync_msg *msg, sr_error **err)
{
  for (;;)
    {
      if (recv_message (sock, msg, err) < 0)
        return -1;
      if (msg->hdr.type != SR_SYNC_LOG)
        return 0;
      int level = msg->hdr.value;
      if (level < SR_LOG_ERROR || level > SR_LOG_DEBUG)
        level = SR_LOG_ERROR;
      sr_log_emit ((enum sr_log_level) level, msg->text);
    }
}

int
sr_sync_error_from (const struct sr_sync_msg *msg, sr_error **err)
{
  /* The text already carries the strerror part. */
  sr_fail (err, 0, "%s", msg->text);
  if (err != NULL && *err != NULL)
    (*err)->errnum = msg->hdr.value;
  return -1;
}

int
sr_sync_expect_step_msg (int sock, enum sr_sync_step step,
                         struct sr_sync_msg *msg, sr_error **err)
{
  if (sr_sync_recv (sock, msg, err) < 0)
    return -1;
  if (msg->hdr.type == SR_SYNC_ERROR)
    return sr_sync_error_from (msg, err);
  sr_close (msg->fd);
  msg->fd = -1;
  if (msg->hdr.type != SR_SYNC_STEP || msg->hdr.value != (int32_t) step)
    return sr_fail (err, EPROTO, "sync: expected step %d, got message %d/%d",
                    step, msg->hdr.type, msg->hdr.value);
  return 0;
}

int
sr_sync_expect_step (int sock, enum sr_sync_step step, sr_error **err)
{
  struct sr_sync_msg msg;
  return sr_sync_expect_step_msg (sock, step, &msg, err);
}

void
sr_sync_send_log (int sock, enum sr_log_level level, const char *msg)
{
  sr_sync_send (sock, SR_SYNC_LOG, level, msg, NULL);
}

static void
forward_log (void *ctx, enum sr_log_level level, const char *msg)
{
  sr_sync_send_log ((int) (intptr_t) ctx, level, msg);
}

void
sr_log_set_forward_fd (int fd)
{
  if (fd < 0)
    sr_log_set_forward (NULL, NULL);
  else
    sr_log_set_forward (forward_log, (void *) (intptr_t) fd);
}

void
sr_sync_die (int sock, sr_error *err)
{
  const char *msg = err != NULL ? err->msg : "unknown error";
  int errnum = err != NULL ? err->errnum : 0;

  if (sr_sync_send (sock, SR_SYNC_ERROR, errnum, msg, NULL) < 0)
    {
      /* No parent to tell: the container's stderr is the last resort. */
      char *line = xasprintf ("sandrun: init: %s\n", msg);
      (void) sr_write_all (2, line, strlen (line));
      free (line);
    }
  _exit (1);
}

int
sr_sync_wait_exec (int sock, sr_error **err)
{
  for (;;)
    {
      struct sr_sync_msg msg;
      sr_error *e = NULL;
      if (sr_sync_recv (sock, &msg, &e) < 0)
        {
          sr_error_free (e); /* EOF: the execve happened, or the init died */
          return 0;
        }
      if (msg.fd >= 0)
        close (msg.fd);
      if (msg.hdr.type == SR_SYNC_ERROR)
        return sr_sync_error_from (&msg, err);
    }
}
