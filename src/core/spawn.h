/* Starting the container init without re-executing the runtime: the parent
 * clones a child with the namespace flags; the child (init.c) performs the
 * ordered setup steps up to execve.  Both sides follow the same script of
 * sync steps (sync.h), derived from the config by sr_spawn_plan_steps(), so
 * neither waits for a message the other will not send. */
#ifndef SANDRUN_SPAWN_H
#define SANDRUN_SPAWN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci-spec/types.h"
#include "core/cgroup/cgroup.h"
#include "sandrun/error.h"
#include "core/idmap.h"
#include "core/namespaces.h"
#include "core/process.h"
#include "core/seccomp.h"

struct sr_spawn_ctx
{
  /* inputs */
  const oci_config *cfg;
  const char *id;
  const char *bundle; /* absolute */
  const char *rootfs; /* absolute */
  struct sr_ns_plan ns;
  const sr_cgroup *cg;
  sr_seccomp_prog *seccomp;
  int console_socket; /* -1: none */
  int fifo_fd;        /* exec fifo, read end (O_NONBLOCK); -1 with start_now */
  int preserve_fds;   /* fds 3 .. 3+preserve_fds-1 reach the process */
  int listen_fds;     /* LISTEN_FDS passed through (part of preserve_fds) */
  bool no_pivot;
  bool no_new_keyring;
  const int *stdio; /* the process's fds 0-2; NULL: the runtime's own */
  /* The runtime's own fds (the locked state directory, the store): the init
   * closes them first, or a waiting init would hold the container's lock. */
  int runtime_fds[2];
  /* Signals the runtime inherited as ignored: the only dispositions that
   * would survive execve, so the only ones the init resets. */
  uint64_t ignored_signals;
  /* The child's entry point; NULL: sr_init_main (exec has its own).  It
   * must not return. */
  void (*child_main) (struct sr_spawn_ctx *ctx, int sync_fd);

  /* which optional sync steps happen (both sides read these) */
  bool want_idmap;
  bool want_timens;
  bool want_state_data; /* the init runs createContainer/startContainer hooks */
  bool want_hooks;      /* the parent runs prestart/createRuntime hooks */
  bool want_notify_fd;  /* the seccomp profile uses SCMP_ACT_NOTIFY */
  bool want_mount_fds;  /* idmapped mounts: made by the parent before the
                           clone, attached by the init (idmap.h) */
  struct sr_mount_fds mount_fds;

  /* child only: what the last steps before execve need, ready before the
   * seccomp filter goes in (sr_init_exec) */
  int listener_fd;     /* connected to listenerPath, when want_notify_fd */
  char *listener_msg;  /* the message that goes with the listener fd */
  size_t listener_len;
  struct sr_caps_late caps_late;

  /* outputs (parent) */
  pid_t clone_pid; /* the child cloned (the init, or the intermediate) */
  uint64_t cg_joined; /* the hierarchies (bit i: cg's i-th) it is in already */
  pid_t pid;       /* the init, in the runtime's pid namespace */
  int pidfd;       /* of the init, -1 when unavailable */
  int sync_fd;     /* parent end of the sync socket */
};

/* Decide the optional steps from the config. */
void sr_spawn_plan_steps (struct sr_spawn_ctx *ctx);

/* Clone the init.  Returns in the parent only, with clone_pid and sync_fd
 * set; the init runs sr_init_main(). */
int sr_spawn_clone (struct sr_spawn_ctx *ctx, sr_error **err);

/* The child side: never returns. */
void sr_init_main (struct sr_spawn_ctx *ctx, int sync_fd)
    __attribute__ ((noreturn));

/* Steps of the init that exec's child takes too. */
/* In a new or joined user namespace: uid and gid 0 there. */
int sr_init_become_root (sr_error **err);
/* A session keyring of the container's ("_ses.ID"), not the runtime's. */
int sr_init_join_session_keyring (const char *id, sr_error **err);
/* Fork the process that enters the pid and time namespaces joined or made
 * (they apply to children only), a sibling (CLONE_PARENT) so that the
 * runtime can wait for it.  Returns 0 in the new process; the calling one
 * sends the new pid to the runtime (a PID message) and exits.  `what` names
 * the new process in the error. */
int sr_init_fork_sibling (int sync, const char *what, sr_error **err);
/* After the filesystem is the container's: terminal (the slave bound over
 * /dev/console when `bind_console`), rlimits, oomScoreAdj, the process
 * attributes, identity, labels, no_new_privs, in that order.  Without
 * no_new_privs and with a seccomp filter, CAP_SYS_ADMIN stays until
 * sr_init_exec. */
int sr_init_setup_process (struct sr_spawn_ctx *ctx, bool bind_console,
                           sr_error **err);
/* With a listener (want_notify_fd): receive the socket the parent connected
 * to listenerPath and the message to send on it. */
int sr_init_receive_listener (struct sr_spawn_ctx *ctx, int sync, sr_error **err);
/* The last steps, once everything else is done (the executable found, the
 * cwd checked, fds marked, hooks run): the seccomp filter, the listener fd
 * to the agent, the capability the load needed dropped, execve.  Returns
 * only on failure. */
int sr_init_exec (struct sr_spawn_ctx *ctx, const char *exe, char *const *env,
                  sr_error **err);

#endif
