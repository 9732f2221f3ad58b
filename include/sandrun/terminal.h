/* process.terminal: a pty whose master goes to the engine over the
 * --console-socket (SCM_RIGHTS, as runc's docs/terminals.md describes) and
 * whose slave becomes the process's stdio and controlling terminal. */
#ifndef SANDRUN_TERMINAL_H
#define SANDRUN_TERMINAL_H

#include <stdbool.h>

#include "oci-spec/types.h"
#include "sandrun/error.h"

/* In the init, after pivot_root: open a pty from the container's /dev/ptmx,
 * apply consoleSize, bind-mount the slave over /dev/console (when
 * `bind_console`), send the master over console_socket, and make the slave
 * the controlling terminal and fds 0, 1, 2.  The master is closed here. */
int sr_terminal_setup (const oci_process *p, int console_socket,
                       bool bind_console, sr_error **err);

#endif
