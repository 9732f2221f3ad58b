/* The parent <-> init synchronisation protocol, over one SOCK_SEQPACKET
 * socketpair (message boundaries kept: one write, one message).
 *
 * Version 1.  Every message is a struct sr_sync_hdr followed by `len` bytes of
 * text.  Types:
 *   STEP    a numbered step is done, or may begin (value = enum sr_sync_step)
 *   ERROR   the sender failed: value = errno, text = the message; the child
 *           _exits after sending it
 *   LOG     a log line: value = level, text = the message
 *   FD      an fd travels with the message (SCM_RIGHTS): value = what it is
 *   PID     value = a pid (the init's pid in the parent's pid namespace)
 *   DATA    text = a document (the state JSON for the container's hooks, the
 *           message for the seccomp listener)
 * Every wait is bounded by the peer: EOF on the socket means the peer died,
 * and the waiting side fails closed. */
#ifndef SANDRUN_SYNC_H
#define SANDRUN_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "sandrun/error.h"
#include "sandrun/log.h"

#define SR_SYNC_VERSION 1
#define SR_SYNC_MAX_TEXT 8192

enum sr_sync_type
{
  SR_SYNC_STEP = 1,
  SR_SYNC_ERROR,
  SR_SYNC_LOG,
  SR_SYNC_FD,
  SR_SYNC_PID,
  SR_SYNC_DATA,
};

enum sr_sync_step
{
  SR_STEP_IDMAP_PLEASE = 1, /* child -> parent: write my uid/gid maps */
  SR_STEP_IDMAP_DONE,       /* parent -> child */
  SR_STEP_CGROUP_DONE,      /* parent -> child: you are in your cgroup */
  SR_STEP_HOOKS_PLEASE,     /* child -> parent: mounts done, run prestart/createRuntime */
  SR_STEP_HOOKS_DONE,       /* parent -> child */
  SR_STEP_TIMENS_PLEASE,    /* child -> parent: write my timens_offsets */
  SR_STEP_TIMENS_DONE,      /* parent -> child */
  SR_STEP_READY,            /* child -> parent: set up, about to wait for start */
  SR_STEP_GO,               /* parent -> child: create is complete; keep waiting */
  SR_STEP_CGROUP_JOINED,    /* child -> parent, first: the v1 cgroups I moved
                               myself into (text: a hex mask) */
};

enum sr_sync_fd_kind
{
  SR_FD_CONSOLE_MASTER = 1,
  SR_FD_SECCOMP_LISTENER, /* parent -> child: connected to listenerPath */
};

struct sr_sync_hdr
{
  uint16_t version;
  uint16_t type;
  int32_t value;
  uint32_t len; /* bytes of text following the header */
};

struct sr_sync_msg
{
  struct sr_sync_hdr hdr;
  char text[SR_SYNC_MAX_TEXT + 1]; /* always NUL-terminated on receipt */
  int fd;                          /* for SR_SYNC_FD, else -1 */
};

int sr_sync_send (int sock, enum sr_sync_type type, int32_t value,
                  const char *text, sr_error **err);
int sr_sync_send_fd (int sock, int32_t kind, int fd, sr_error **err);
/* Receive one message.  LOG messages are emitted through the log and skipped
 * (unless `want_logs`).  EOF is an error (EPIPE). */
int sr_sync_recv (int sock, struct sr_sync_msg *msg, sr_error **err);
/* Turn a received ERROR message into *err; returns -1. */
int sr_sync_error_from (const struct sr_sync_msg *msg, sr_error **err);
/* After GO: wait until the init's end closes at its execve (close-on-exec)
 * or its death; -1 with the init's error when it sent one meanwhile. */
int sr_sync_wait_exec (int sock, sr_error **err);
/* Wait for STEP `step`; an ERROR message becomes *err. */
int sr_sync_expect_step (int sock, enum sr_sync_step step, sr_error **err);
/* The same, keeping the message (its text). */
int sr_sync_expect_step_msg (int sock, enum sr_sync_step step,
                             struct sr_sync_msg *msg, sr_error **err);
void sr_sync_send_log (int sock, enum sr_log_level level, const char *msg);
/* Child side: send log lines as LOG messages on `fd` instead of writing
 * them (-1 stops). */
void sr_log_set_forward_fd (int fd);
/* Child side: report err to the parent and _exit(1). */
void __attribute__ ((noreturn)) sr_sync_die (int sock, sr_error *err);

#endif
