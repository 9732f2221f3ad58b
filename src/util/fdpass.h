/* Passing file descriptors over unix sockets (SCM_RIGHTS). */
#ifndef SANDRUN_FDPASS_H
#define SANDRUN_FDPASS_H

#include <stddef.h>

#include "sandrun/error.h"

/* Send `fd` with the payload `data`/`len` (at least one byte is sent). */
int sr_send_fd (int sock, int fd, const void *data, size_t len,
                sr_error **err);
/* Receive one fd (and up to `len` bytes of payload into `data`, when not
 * NULL).  Returns the fd or -1.  Extra fds that arrive are closed. */
int sr_recv_fd (int sock, void *data, size_t len, sr_error **err);

/* Connect to a unix stream socket by path (the --console-socket). */
int sr_unix_connect (const char *path, sr_error **err);

#endif
