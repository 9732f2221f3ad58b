/* OCI hooks: each hook is run with the container state JSON on its stdin,
 * its own args and env (nothing of the runtime's environment), and an
 * optional timeout after which it is killed. */
#ifndef SANDRUN_HOOKS_H
#define SANDRUN_HOOKS_H

#include "oci-spec/types.h"
#include "sandrun/error.h"

/* Run the hooks of `list` in order; stop at the first failure (non-zero
 * exit, signal, timeout, exec failure): "KIND hook \"PATH\": exited with
 * status 3".  `kind` names the hook kind in messages ("prestart",
 * "createRuntime", ...).  The hook's stdout and stderr are the runtime's
 * stderr. */
int sr_hooks_run (const oci_hook_list *list, const char *kind,
                  const char *state_json, sr_error **err);

/* Run them all, logging failures as warnings instead (poststart after the
 * first failure is an error for `start`, poststop is warn-only per the
 * spec).  Returns the number that failed. */
int sr_hooks_run_warn (const oci_hook_list *list, const char *kind,
                       const char *state_json);

#endif
