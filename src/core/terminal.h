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
 * the controlling terminal and fds 0, 1, 2.  The master is closed here;
 * console_socket is not (the caller owns it).
 * The slave is taken with TIOCGPTPEER (by name only on kernels < 4.13, then
 * checked to be that devpts slave).  The message carries the master with
 * the payload "/dev/ptmx", what runc sends.  /dev/console is created as an
 * empty file when missing and must not be a symlink (CVE-2025-52565); the
 * bind is made fd to fd (open_tree + move_mount).  The slave's owner becomes
 * the container user in sr_process_switch_identity. */
int sr_terminal_setup (const oci_process *p, int console_socket,
                       bool bind_console, sr_error **err);

#endif
