/* `run` in the foreground: the runtime waits for the init, relays signals
 * to it, and without --console-socket is the other end of its terminal. */
#ifndef SANDRUN_FOREGROUND_H
#define SANDRUN_FOREGROUND_H

#include <signal.h>
#include <sys/types.h>
#include <termios.h>

/* Block the relayed signals and SIGCHLD (before the clone, so none is
 * missed); the init unblocks them for itself. */
void sr_foreground_block_signals (sigset_t *set, sigset_t *old);

/* Wait for `pid` (a child of ours), relaying the signals of `set` and, when
 * master >= 0, copying stdin -> master and master -> stdout.  Returns the
 * exit status (128+N when killed by signal N). */
int sr_foreground_wait (pid_t pid, int master, const sigset_t *set);

/* Put our terminal (stdin) in raw mode; -1 when stdin is not a terminal. */
int sr_foreground_raw_terminal (struct termios *saved);
void sr_foreground_restore_terminal (const struct termios *saved);

#endif
