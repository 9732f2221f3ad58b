#ifndef SANDRUN_EGRESS_LOOP_H
#define SANDRUN_EGRESS_LOOP_H

#include "egress/gateway.h"

/* Serve until the control socket ends (the supervisor closed it or died)
 * or a termination signal comes, answering its marks (control.c); then close every connection (each is
 * recorded) and return. */
int eg_loop_run (struct gateway *gw, int control_fd, sr_error **err);

#endif
