/* The container lifecycle (runtime.md): create, start, state, kill, delete,
 * and `run` built from them.  The commands in src/cmd/ call these; they do
 * no system calls of their own.  Part of the public API (include/sandrun/):
 * what the sandbox layer builds on; a loaded container's internals are in
 * core/lifecycle.h. */
#ifndef SANDRUN_CONTAINER_H
#define SANDRUN_CONTAINER_H

#include <stdbool.h>
#include <sys/types.h>

#include "oci-spec/types.h"
#include "sandrun/error.h"

typedef enum
{
  SR_STATUS_CREATING = 0,
  SR_STATUS_CREATED,
  SR_STATUS_RUNNING,
  SR_STATUS_PAUSED,
  SR_STATUS_STOPPED,
} sr_status;

const char *sr_status_name (sr_status s);

/* Global options every command shares. */
struct sr_globals
{
  const char *root;
  const char *log;
  const char *log_format;
  bool debug;
  bool systemd_cgroup;
};

struct sr_create_opts
{
  const char *bundle;         /* default: cwd */
  const char *console_socket; /* NULL: none */
  const char *pid_file;
  bool no_pivot;
  bool no_new_keyring;
  int preserve_fds;
  /* `run`: start right away and (unless detach) wait for the exit */
  bool start_now;
  bool detach;
  bool keep; /* run: keep the stopped container instead of deleting it */

  /* For a caller that builds the container itself and stays alive (the
   * sandbox supervisor), rather than a CLI command: */
  /* The config to use instead of BUNDLE/config.json; it is written with
   * oci_config_to_json and parsed back, so it is checked (and saved in the
   * state directory) exactly like a config.json.  The caller keeps it. */
  const oci_config *config;
  /* The root filesystem (absolute), instead of root.path resolved against
   * the bundle; root may then be absent from the config (root.readonly
   * still applies when present). */
  const char *rootfs;
  /* When set_stdio, the process's stdin, stdout and stderr are these fds
   * (duplicated into place by the init; the caller keeps and closes its
   * copies).  Not with process.terminal, which brings its own. */
  int stdio[3];
  bool set_stdio;
  /* Out, when non-NULL: the init's pid and a pidfd for it (O_CLOEXEC, the
   * caller's to close).  The init is the caller's child: the caller reaps
   * it, e.g. with sr_wait_pidfd. */
  pid_t *init_pid;
  int *init_pidfd;
};

/* `create` and `run`: returns 0, or for run in the foreground the exit
 * status of the container (128+N when killed by signal N) in *exit_status.
 * It neither exits nor daemonises the caller and keeps no state between
 * calls, so a long-lived process may create many containers; a failure
 * leaves nothing behind (process, cgroup, state directory). */
int sr_container_create (const struct sr_globals *g, const char *id,
                         const struct sr_create_opts *opts, int *exit_status,
                         sr_error **err);
int sr_container_start (const struct sr_globals *g, const char *id,
                        sr_error **err);
int sr_container_kill (const struct sr_globals *g, const char *id, int signo,
                       bool all, sr_error **err);
/* The processes of a container (from its cgroup), malloc'd. */
int sr_container_pids (const struct sr_globals *g, const char *id, pid_t **pids,
                       size_t *n, sr_error **err);
int sr_container_delete (const struct sr_globals *g, const char *id,
                         bool force, sr_error **err);

/* What `list` shows of a container. */
struct sr_container_info
{
  char *id;
  pid_t pid; /* the init's, 0 when stopped */
  sr_status status;
  char *bundle;
  char *rootfs;
  char *created; /* RFC 3339 */
  char *owner;
  oci_map annotations;
};

/* Every container under the root, sorted by id: a malloc'd array of *n
 * entries (*out NULL when there are none, as when the root does not exist
 * yet).  One deleted while listing is left out.  Free with
 * sr_container_list_free. */
int sr_container_list (const struct sr_globals *g,
                       struct sr_container_info **out, size_t *n,
                       sr_error **err);
void sr_container_list_free (struct sr_container_info *v, size_t n);

/* `spec`: a default config.json (runc's), for a rootless user when
 * `rootless`; malloc'd. */
char *sr_spec_default (bool rootless, uid_t uid, gid_t gid);

#endif
