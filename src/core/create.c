/* `create` and `run`, the parent side: reserve the id, create the cgroup,
 * clone the init, answer its requests, record the result.  Any failure
 * undoes everything (process, cgroup, state directory). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci-spec/oci-spec.h"
#include "core/cgroup/cgroup.h"
#include "sandrun/container.h"
#include "util/fdpass.h"
#include "core/foreground.h"
#include "core/hooks.h"
#include "core/lifecycle.h"
#include "core/linux_attrs.h"
#include "sandrun/log.h"
#include "core/namespaces.h"
#include "core/seccomp.h"
#include "core/spawn.h"
#include "core/sync.h"
#include "sandrun/util.h"

#define EXEC_FIFO "exec.fifo"
#define SAVED_CONFIG "config.json"
#define CONFIG_FILE "config.json"

/* Everything a create holds while it runs; released (and on failure undone)
 * in one place. */
struct create_txn
{
  const struct sr_globals *g;
  const struct sr_create_opts *opts;
  const char *id;
  sr_container c;
  char *config_data;
  size_t config_len;
  oci_config *cfg;
  sr_cgroup *cg;
  sr_seccomp_prog *seccomp;
  struct sr_spawn_ctx spawn;
  char *bundle;
  char *rootfs;
  int console_relay; /* run with a terminal and no --console-socket */
  bool reserved;
  bool done;
};

static void
create_txn_release (struct create_txn *t)
{
  if (t->reserved && !t->done)
    {
      if (t->spawn.clone_pid > 0)
        {
          kill (t->spawn.clone_pid, SIGKILL);
          waitpid (t->spawn.clone_pid, NULL, 0);
        }
      if (t->spawn.pid > 0 && t->spawn.pid != t->spawn.clone_pid)
        {
          kill (t->spawn.pid, SIGKILL);
          waitpid (t->spawn.pid, NULL, 0);
        }
      /* The record may lack the pid: it is gone already. */
      t->c.rec.pid = 0;
      /* No cgroup of ours (the create failed before or while making it,
       * which undid what it made): the recorded path may name another
       * container's cgroup, never to be touched. */
      if (t->cg == NULL)
        {
          free (t->c.rec.cgroup_path);
          t->c.rec.cgroup_path = NULL;
        }
      _cleanup_error_ sr_error *cleanup_err = NULL;
      if (sr_container_destroy (&t->c, NULL, &cleanup_err) < 0)
        sr_warn ("create \"%s\": cleanup: %s", t->id, cleanup_err->msg);
    }
  sr_close (t->spawn.sync_fd);
  sr_close (t->spawn.pidfd);
  sr_close (t->spawn.console_socket);
  sr_close (t->console_relay);
  sr_close (t->spawn.fifo_fd);
  sr_ns_plan_clear (&t->spawn.ns);
  sr_seccomp_prog_free (t->seccomp);
  sr_cgroup_free (t->cg);
  if (t->cfg != NULL)
    oci_config_free (t->cfg);
  free (t->config_data);
  free (t->bundle);
  free (t->rootfs);
  sr_container_release (&t->c);
}

static char *
absolute_path (const char *path, const char *what, sr_error **err)
{
  char *abs = realpath (path, NULL);
  if (abs == NULL)
    sr_fail (err, errno, "%s \"%s\"", what, path);
  return abs;
}

/* The rootfs is set up by mounting over the mount table and pivoting the
 * root: done in a namespace sandrun did not create (none listed: the
 * caller's; a path: someone else's), that would replace the caller's root
 * filesystem, the host's when run from a host shell.  runc and crun refuse
 * a config without one too. */
static int
check_mount_namespace (const oci_linux *l, sr_error **err)
{
  for (size_t i = 0; l != NULL && i < l->namespaces_len; i++)
    {
      const oci_namespace *ns = &l->namespaces[i];
      if (ns->type == NULL || strcmp (ns->type, "mount") != 0)
        continue;
      if (ns->path != NULL && ns->path[0] != '\0')
        return sr_fail (err, 0,
                        "linux.namespaces: joining the mount namespace \"%s\" is not supported: "
                        "sandrun never changes the mount table of a namespace it did not create",
                        ns->path);
      return 0;
    }
  return sr_fail (err, 0,
                  "linux.namespaces: a mount namespace is required: "
                  "sandrun never changes the mount table of a namespace it did not create");
}

/* The text of the config: BUNDLE/config.json, or the caller's config
 * written out, so that both are checked and saved the same way. */
static int
load_config_text (struct create_txn *t, sr_error **err)
{
  if (t->opts->config != NULL)
    {
      t->config_data = oci_config_to_json (t->opts->config);
      if (t->config_data == NULL)
        return sr_fail (err, errno, "config: a string is not valid UTF-8");
      t->config_len = strlen (t->config_data);
      return 0;
    }
  _cleanup_close_ int dirfd = open (t->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return sr_fail (err, errno, "bundle \"%s\"", t->bundle);
  if (sr_read_file_at (dirfd, CONFIG_FILE, OCI_MAX_DOCUMENT_SIZE, &t->config_data,
                       &t->config_len, err) < 0)
    return sr_wrap (err, "load config");
  return 0;
}

/* The root filesystem: the caller's, or root.path against the bundle. */
static int
resolve_rootfs (struct create_txn *t, sr_error **err)
{
  const char *given = t->opts->rootfs;
  if (given != NULL && given[0] != '/')
    return sr_fail (err, EINVAL, "rootfs \"%s\": must be an absolute path", given);
  if (given == NULL && (t->cfg->root == NULL || t->cfg->root->path == NULL))
    return sr_fail (err, EINVAL, "config.json: root.path: required");
  const char *path = given != NULL ? given : t->cfg->root->path;
  _cleanup_free_ char *root = path[0] == '/' ? xstrdup (path)
                                             : xasprintf ("%s/%s", t->bundle, path);
  t->rootfs = absolute_path (root, "rootfs", err);
  if (t->rootfs == NULL)
    return -1;
  struct stat st;
  if (stat (t->rootfs, &st) < 0 || !S_ISDIR (st.st_mode))
    return sr_fail (err, ENOTDIR, "rootfs \"%s\"", t->rootfs);
  return 0;
}

/* config.json from the bundle, and the checks that need no resources. */
static int
load_bundle (struct create_txn *t, sr_error **err)
{
  const char *bundle = t->opts->bundle != NULL ? t->opts->bundle : ".";

  t->bundle = absolute_path (bundle, "bundle", err);
  if (t->bundle == NULL)
    return -1;
  if (load_config_text (t, err) < 0)
    return -1;
  t->cfg = oci_config_parse_data (t->config_data, t->config_len, err);
  if (t->cfg == NULL)
    return sr_wrap (err, "config.json");

  const oci_config *cfg = t->cfg;
  if (cfg->process == NULL)
    return sr_fail (err, EINVAL, "config.json: process: required");
  if (cfg->process->args == NULL || cfg->process->args[0] == NULL)
    return sr_fail (err, EINVAL, "config.json: process.args: must not be empty");
  if (check_mount_namespace (cfg->linux_, err) < 0)
    return -1;
  /* Without a console socket, a foreground `run` is the terminal's other
   * end itself. */
  if (cfg->process->terminal && t->opts->console_socket == NULL
      && !(t->opts->start_now && !t->opts->detach))
    return sr_fail (err, EINVAL, "process.terminal needs --console-socket");
  if (!cfg->process->terminal && t->opts->console_socket != NULL)
    return sr_fail (err, EINVAL, "--console-socket needs process.terminal to be true");
  if (cfg->process->terminal && t->opts->set_stdio)
    return sr_fail (err, EINVAL, "process.terminal and the caller's stdio exclude each other");
  return resolve_rootfs (t, err);
}

static char *
owner_name (void)
{
  struct passwd *pw = getpwuid (geteuid ());
  return pw != NULL ? xstrdup (pw->pw_name) : xasprintf ("%d", (int) geteuid ());
}

/* Reserve the id and write the first record before allocating anything, so
 * that `delete --force` can clean up after a create killed at any point. */
static int
reserve (struct create_txn *t, sr_error **err)
{
  sr_record *rec = &t->c.rec;

  if (sr_store_open (t->g->root, true, &t->c.store, err) < 0)
    return -1;
  t->c.dirfd = sr_store_reserve (&t->c.store, t->id, err);
  if (t->c.dirfd < 0)
    return -1;
  t->reserved = true;
  rec->id = xstrdup (t->id);
  rec->bundle = xstrdup (t->bundle);
  rec->rootfs = xstrdup (t->rootfs);
  rec->created = sr_now_rfc3339 ();
  rec->owner = owner_name ();
  rec->systemd_cgroup = t->g->systemd_cgroup;
  rec->annotations.len = t->cfg->annotations.len;
  rec->annotations.v = xcalloc (rec->annotations.len, sizeof (oci_kv));
  for (size_t i = 0; i < rec->annotations.len; i++)
    {
      rec->annotations.v[i].key = xstrdup (t->cfg->annotations.v[i].key);
      rec->annotations.v[i].value = xstrdup (t->cfg->annotations.v[i].value);
    }
  if (sr_write_file_atomic (t->c.dirfd, SAVED_CONFIG, t->config_data, t->config_len, 0600, err) < 0)
    return -1;
  return sr_record_write (t->c.dirfd, rec, err);
}

static int
allocate (struct create_txn *t, sr_error **err)
{
  const oci_linux *l = t->cfg->linux_;
  struct sr_spawn_ctx *s = &t->spawn;

  const struct sr_cgroup_spec spec = {
    .id = t->id,
    .cgroups_path = l ? l->cgroups_path : NULL,
    .res = l ? l->resources : NULL,
    .devices = l ? l->devices : NULL,
    .devices_len = l ? l->devices_len : 0,
    .systemd = t->g->systemd_cgroup,
  };
  t->c.rec.cgroup_path = sr_cgroup_plan (&spec, err);
  if (t->c.rec.cgroup_path == NULL)
    return sr_wrap (err, "cgroup");
  if (sr_record_write (t->c.dirfd, &t->c.rec, err) < 0)
    return -1;
  if (sr_cgroup_make (&spec, &t->cg, err) < 0)
    return sr_wrap (err, "cgroup");
  t->c.rec.cgroup_shared = sr_cgroup_shared (t->cg);

  if (l != NULL && l->seccomp != NULL)
    {
      _cleanup_free_ char *cache = xasprintf ("%s/.cache", t->g->root);
      if (sr_seccomp_prepare (l->seccomp, cache, &t->seccomp, err) < 0)
        return -1; /* its messages start with "seccomp" */
    }
  if (t->opts->console_socket != NULL)
    {
      s->console_socket = sr_unix_connect (t->opts->console_socket, err);
      if (s->console_socket < 0)
        return sr_wrap (err, "console socket");
    }
  else if (t->cfg->process->terminal)
    {
      int sv[2];
      if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return sr_fail (err, errno, "console socket");
      t->console_relay = sv[0];
      s->console_socket = sv[1];
    }
  if (!t->opts->start_now)
    {
      if (mkfifoat (t->c.dirfd, EXEC_FIFO, 0600) < 0)
        return sr_fail (err, errno, "create exec fifo");
      s->fifo_fd = openat (t->c.dirfd, EXEC_FIFO, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      if (s->fifo_fd < 0)
        return sr_fail (err, errno, "open exec fifo");
    }
  return 0;
}

/* Socket activation (sd_listen_fds): the fds are ours only when LISTEN_PID
 * names this process, as runc (go-systemd) checks. */
static int
listen_fds_from_env (void)
{
  long n, pid;
  const char *v = getenv ("LISTEN_FDS");
  const char *p = getenv ("LISTEN_PID");
  if (v == NULL || sr_parse_long (v, &n) < 0 || n < 0 || n > 1024)
    return 0;
  if (p == NULL || sr_parse_long (p, &pid) < 0 || pid != (long) getpid ())
    return 0;
  return (int) n;
}

static int
prepare_spawn (struct create_txn *t, sr_error **err)
{
  struct sr_spawn_ctx *s = &t->spawn;

  s->cfg = t->cfg;
  s->id = t->id;
  s->bundle = t->bundle;
  s->rootfs = t->rootfs;
  s->cg = t->cg;
  s->seccomp = t->seccomp;
  s->no_pivot = t->opts->no_pivot;
  s->no_new_keyring = t->opts->no_new_keyring;
  s->stdio = t->opts->set_stdio ? t->opts->stdio : NULL;
  s->runtime_fds[0] = t->c.dirfd;
  s->runtime_fds[1] = t->c.store.root_fd;
  s->listen_fds = listen_fds_from_env ();
  s->preserve_fds = t->opts->preserve_fds + s->listen_fds;
  if (sr_ns_plan_make (t->cfg->linux_, &s->ns, err) < 0)
    return -1;
  sr_spawn_plan_steps (s);
  return 0;
}

static char *
state_json_for_hooks (struct create_txn *t, sr_status status)
{
  t->c.status = status;
  t->c.rec.pid = t->spawn.pid;
  return sr_container_state_json (&t->c);
}

static int
receive_init_pid (struct create_txn *t, sr_error **err)
{
  struct sr_sync_msg msg;
  if (sr_sync_recv (t->spawn.sync_fd, &msg, err) < 0)
    return -1;
  if (msg.hdr.type == SR_SYNC_ERROR)
    return sr_sync_error_from (&msg, err);
  if (msg.hdr.type != SR_SYNC_PID || msg.hdr.value <= 0)
    return sr_fail (err, EPROTO, "sync: expected the init's pid");
  t->spawn.pid = msg.hdr.value;
  /* The intermediate exits right after sending it. */
  waitpid (t->spawn.clone_pid, NULL, 0);
  t->spawn.clone_pid = 0;
  return 0;
}

static int
answer_step (struct create_txn *t, enum sr_sync_step please, enum sr_sync_step done,
             int (*act) (struct create_txn *, sr_error **), sr_error **err)
{
  if (sr_sync_expect_step (t->spawn.sync_fd, please, err) < 0)
    return -1;
  if (act (t, err) < 0)
    return -1;
  return sr_sync_send (t->spawn.sync_fd, SR_SYNC_STEP, done, NULL, err);
}

static int
write_id_maps (struct create_txn *t, sr_error **err)
{
  return sr_ns_write_id_maps (t->spawn.clone_pid, t->cfg->linux_, err);
}

static int
write_time_offsets (struct create_txn *t, sr_error **err)
{
  return sr_ns_write_time_offsets (t->spawn.clone_pid, t->cfg->linux_, err);
}

static int
run_runtime_hooks (struct create_txn *t, sr_error **err)
{
  const oci_hooks *h = t->cfg->hooks;
  _cleanup_free_ char *state = state_json_for_hooks (t, SR_STATUS_CREATING);
  sr_debug ("hooks: prestart and createRuntime");
  if (sr_hooks_run (&h->prestart, "prestart", state, t->bundle, err) < 0)
    return -1;
  return sr_hooks_run (&h->create_runtime, "createRuntime", state,
                       t->bundle, err);
}

static int
forward_listener (struct create_txn *t, sr_error **err)
{
  _cleanup_free_ char *state = state_json_for_hooks (t, SR_STATUS_CREATING);
  return sr_seccomp_hand_listener (t->cfg->linux_->seccomp, t->spawn.sync_fd, t->spawn.pid, state, err);
}

/* The parent's half of the script in sync.h, in the init's order. */
static int
drive_init (struct create_txn *t, sr_error **err)
{
  struct sr_spawn_ctx *s = &t->spawn;

  if (s->want_idmap && answer_step (t, SR_STEP_IDMAP_PLEASE, SR_STEP_IDMAP_DONE, write_id_maps, err) < 0)
    return -1;
  if (s->want_timens
      && answer_step (t, SR_STEP_TIMENS_PLEASE, SR_STEP_TIMENS_DONE, write_time_offsets, err) < 0)
    return -1;
  if (s->ns.two_step && receive_init_pid (t, err) < 0)
    return -1;
  t->c.rec.pid = s->pid;
  t->c.rec.start_time = sr_proc_start_time (s->pid);
  if (sr_record_write (t->c.dirfd, &t->c.rec, err) < 0)
    return -1;
  if (sr_cgroup_enter (t->cg, s->pid, s->cg_joined, err) < 0)
    return sr_wrap (err, "cgroup");
  sr_debug ("init: pid %d in cgroup \"%s\"", (int) s->pid, t->c.rec.cgroup_path);
  if (sr_linux_attrs_parent (t->cfg, t->id, s->pid, err) < 0)
    return -1;
  if (sr_sync_send (s->sync_fd, SR_SYNC_STEP, SR_STEP_CGROUP_DONE, NULL, err) < 0)
    return -1;
  if (s->want_state_data)
    {
      _cleanup_free_ char *state = state_json_for_hooks (t, SR_STATUS_CREATING);
      if (sr_sync_send (s->sync_fd, SR_SYNC_DATA, 0, state, err) < 0)
        return -1;
    }
  if (s->want_hooks
      && answer_step (t, SR_STEP_HOOKS_PLEASE, SR_STEP_HOOKS_DONE, run_runtime_hooks, err) < 0)
    return -1;
  if (s->want_notify_fd && forward_listener (t, err) < 0)
    return -1;
  if (sr_sync_expect_step (s->sync_fd, SR_STEP_READY, err) < 0)
    return -1;
  sr_debug ("init: ready (namespaces, mounts, process set up)");
  return 0;
}

int
sr_write_pid_file (const char *path, pid_t pid, sr_error **err)
{
  _cleanup_free_ char *dir = xstrdup (path);
  char *slash = strrchr (dir, '/');
  const char *name = path;
  _cleanup_close_ int dirfd = -1;

  if (slash != NULL)
    {
      *slash = '\0';
      name = slash + 1;
      dirfd = open (slash == dir ? "/" : dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
  else
    dirfd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return sr_fail (err, errno, "pid file \"%s\"", path);
  _cleanup_free_ char *text = xasprintf ("%d", (int) pid);
  if (sr_write_file_atomic (dirfd, name, text, strlen (text), 0644, err) < 0)
    return sr_wrap (err, "pid file \"%s\"", path);
  return 0;
}

static int
finish_create (struct create_txn *t, sr_error **err)
{
  t->c.rec.created_done = true;
  if (sr_record_write (t->c.dirfd, &t->c.rec, err) < 0)
    return -1;
  if (t->opts->pid_file != NULL && sr_write_pid_file (t->opts->pid_file, t->spawn.pid, err) < 0)
    return -1;
  if (t->opts->init_pidfd != NULL && t->spawn.pidfd < 0)
    {
      /* Two-step spawns (and kernels without clone3) give none: the init is
       * our unreaped child, so its pid cannot have been reused. */
      t->spawn.pidfd = (int) syscall (SYS_pidfd_open, t->spawn.pid, 0);
      if (t->spawn.pidfd < 0)
        return sr_fail (err, errno, "pidfd of the init");
    }
  if (sr_sync_send (t->spawn.sync_fd, SR_SYNC_STEP, SR_STEP_GO, NULL, err) < 0)
    return -1;
  t->done = true;
  return 0;
}

/* Say what the init reported failing after GO: its exit status follows,
 * so run's own error path does not. */
static void
log_init_error (const struct create_txn *t, sr_error *e)
{
  sr_wrap (&e, "run \"%s\"", t->id);
  sr_log_fatal_error (e);
  sr_error_free (e);
}

/* A foreground run does not wait for the execve: an error the init sent
 * after GO (a startContainer hook, execve itself) is read once it is gone,
 * from what is left on the socket. */
static void
report_late_init_error (struct create_txn *t)
{
  sr_error *e = NULL;
  int fl = fcntl (t->spawn.sync_fd, F_GETFL);
  if (fl < 0 || fcntl (t->spawn.sync_fd, F_SETFL, fl | O_NONBLOCK) < 0)
    return;
  if (sr_sync_wait_exec (t->spawn.sync_fd, &e) < 0)
    log_init_error (t, e);
}

static int
start_now (struct create_txn *t, int *exit_status, const sigset_t *set, sr_error **err)
{
  const oci_hooks *h = t->cfg->hooks;
  bool poststart = h != NULL && h->poststart.len > 0;
  /* As after `start`: poststart hooks and a detached run's return come once
   * the container's process runs (a foreground run need not wait). */
  bool started = true;
  if (poststart || t->opts->detach)
    {
      sr_error *e = NULL;
      if (sr_sync_wait_exec (t->spawn.sync_fd, &e) < 0)
        {
          if (t->opts->detach)
            {
              *err = e;
              return -1;
            }
          log_init_error (t, e);
          started = false;
        }
    }
  if (poststart && started)
    {
      _cleanup_free_ char *state = state_json_for_hooks (t, SR_STATUS_RUNNING);
      sr_hooks_run_warn (&h->poststart, "poststart", state, t->bundle);
    }
  if (t->opts->detach)
    return 0;
  _cleanup_close_ int master = -1;
  if (t->console_relay >= 0)
    {
      master = sr_recv_fd (t->console_relay, NULL, 0, err);
      if (master < 0)
        return sr_wrap (err, "receive the terminal");
    }
  /* Other commands (kill, delete --force) must not wait for the whole life
   * of the container: drop the lock while it runs. */
  flock (t->c.dirfd, LOCK_UN);
  struct termios saved;
  bool raw = master >= 0 && sr_foreground_raw_terminal (&saved) == 0;
  *exit_status = sr_foreground_wait (t->spawn.pid, master, set);
  if (raw)
    sr_foreground_restore_terminal (&saved);
  if (!poststart)
    report_late_init_error (t);
  if (t->opts->keep)
    return 0;
  struct stat st;
  if (flock (t->c.dirfd, LOCK_EX) < 0 || fstat (t->c.dirfd, &st) < 0 || st.st_nlink == 0)
    return 0; /* deleted meanwhile */
  t->c.rec.pid = 0;
  return sr_container_destroy (&t->c, t->cfg, err);
}

int
sr_container_create (const struct sr_globals *g, const char *id,
                     const struct sr_create_opts *opts, int *exit_status, sr_error **err)
{
  __attribute__ ((cleanup (create_txn_release))) struct create_txn t = {
    .g = g, .opts = opts, .id = id, .c = SR_CONTAINER_INIT,
    .spawn = { .console_socket = -1, .fifo_fd = -1, .pidfd = -1, .sync_fd = -1 },
    .console_relay = -1,
  };
  sigset_t set, old;
  bool foreground = opts->start_now && !opts->detach;
  const char *verb = opts->start_now ? "run" : "create";
  int r;

  sigemptyset (&set);
  if (sr_validate_id (id, err) < 0)
    return -1;
  if (load_bundle (&t, err) < 0 || reserve (&t, err) < 0 || allocate (&t, err) < 0
      || prepare_spawn (&t, err) < 0)
    return sr_wrap (err, "%s \"%s\"", verb, id);
  sr_debug ("%s \"%s\": config of bundle \"%s\" loaded, state reserved",
            verb, id, t.bundle);

  /* A foreground run relays signals to the init: block them before the
   * clone so that none is lost.  Anything else stays killable. */
  if (foreground)
    sr_foreground_block_signals (&set, &old);
  r = sr_spawn_clone (&t.spawn, err);
  if (r == 0)
    r = drive_init (&t, err);
  if (r == 0)
    r = finish_create (&t, err);
  if (r == 0 && opts->start_now)
    r = start_now (&t, exit_status, &set, err);
  if (foreground)
    sigprocmask (SIG_SETMASK, &old, NULL);
  if (r < 0)
    return sr_wrap (err, "%s \"%s\"", verb, id);
  if (opts->init_pid != NULL)
    *opts->init_pid = t.spawn.pid;
  if (opts->init_pidfd != NULL)
    *opts->init_pidfd = steal_fd (&t.spawn.pidfd);
  return 0;
}
