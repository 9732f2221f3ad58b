/* A session's egress gateway, seen from one execution (docs/sessions.md):
 * the gateway lives with the session's supervisor and records the attempts
 * of every execution in one log; an execution asks it for a mark at its
 * start and at its end (src/egress/control.c) and its receipt's `network`
 * is what lies between the two. */
#ifndef SANDRUN_SANDBOX_SESSION_EGRESS_H
#define SANDRUN_SANDBOX_SESSION_EGRESS_H

#include <stdbool.h>
#include <sys/types.h>

#include "egress.h"
#include "session.h"

struct sb_session_egress
{
  bool on;                   /* the session has a gateway */
  int control_fd, log_fd;    /* the supervisor's, taken with pidfd_getfd */
  off_t start;               /* the log past this execution's first mark */
  struct sb_egress at_start; /* the limits' state then */
  struct sb_egress eg;       /* this execution's attempts and limits */
  char token[64];
};

#define SB_SESSION_EGRESS_INIT                                                \
  {                                                                           \
    .control_fd = -1, .log_fd = -1, .at_start = SB_EGRESS_INIT,               \
    .eg = SB_EGRESS_INIT                                                      \
  }

/* Before the command: the gateway's fds and the first mark (nothing
 * without a gateway). */
int sb_session_egress_begin (const struct sb_session *s,
                             struct sb_session_egress *se, sr_error **err);
/* After it: the second mark, and the attempts in between. */
void sb_session_egress_end (const struct sb_session *s,
                            struct sb_session_egress *se);
/* The record for the receipt, NULL without a gateway. */
const struct sb_egress *
sb_session_egress_record (const struct sb_session_egress *se);
void sb_session_egress_clear (struct sb_session_egress *se);

#endif
