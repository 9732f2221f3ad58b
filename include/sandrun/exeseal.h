/* The defence against CVE-2019-5736: a container process must never get a
 * writable handle on the runtime binary through /proc/<pid>/exe of a runtime
 * process (the parent of a create/run/exec, or the init before its execve),
 * nor any handle whose write attempts touch the binary's inode (each one
 * takes write access on it for an instant, and an execve of the binary at
 * that instant fails with ETXTBSY).
 *
 * Before any command that creates or enters a container, sandrun makes sure
 * that it runs from such a handle: nothing to do when the binary is on a
 * read-only filesystem (superblock, not only the mount) or is already a
 * sealed memfd; otherwise it re-executes itself from the binary seen through
 * a private read-only overlayfs (fsopen + fsmount: a distinct inode, no copy,
 * a mount attached nowhere), falling back to a sealed memfd copy
 * (F_SEAL_SEAL|SHRINK|GROW|WRITE).  An environment marker holding the pid
 * (which the exec keeps) stops a loop; it is removed from the environment as
 * soon as the new image starts, so neither hooks nor the container see it,
 * and one inherited from another process is ignored. */
#ifndef SANDRUN_EXESEAL_H
#define SANDRUN_EXESEAL_H

#include <stdbool.h>

#include "sandrun/error.h"

/* The marker set for the re-executed image: "_SANDRUN_EXESEALED=<pid>". */
#define SR_EXESEAL_ENV "_SANDRUN_EXESEALED"

/* Whether `command` (argv's command name) creates or enters a container
 * and so needs the protection: create, run, exec. */
bool sr_exeseal_needed (const char *command);

/* When `command` needs it, make sure this process runs from a handle that
 * cannot be written; re-executes `argv` (does not return) when it does not
 * yet.  Returns 0 when the process is protected or the command needs no
 * protection, < 0 when no protection could be set up (the caller must not
 * go on with the command). */
int sr_exeseal_ensure (const char *command, char **argv, sr_error **err);

/* How this process's binary is protected now: "read-only filesystem",
 * "read-only overlay", "sealed memfd", or NULL when a container could write
 * it or touch its inode (for tests and debug logs). */
const char *sr_exeseal_protection (void);

#endif
