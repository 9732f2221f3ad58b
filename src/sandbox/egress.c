/* The sandbox's side of the egress gateway (see egress.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "egress.h"
#include "egress_policy.h"
#include "sandrun/jsongen.h"
#include "sandrun/util.h"

#define RESOLV_CONF "nameserver 127.0.0.1\n"

#define PROXY "http://127.0.0.1:3128"
const char *const sb_egress_env[] = {
  "HTTP_PROXY=" PROXY,
  "HTTPS_PROXY=" PROXY,
  "ALL_PROXY=" PROXY,
  "http_proxy=" PROXY,
  "https_proxy=" PROXY,
  "all_proxy=" PROXY,
  "NO_PROXY=localhost,127.0.0.1",
  "no_proxy=localhost,127.0.0.1",
  NULL,
};

/* The gateway's record is read whole after the run: bounded (the gateway
 * stops recording after 10000 attempts). */
#define LOG_MAX (16u << 20)

int
sb_egress_write_resolv_conf (const char *rootfs, sr_error **err)
{
  _cleanup_close_ int root = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct open_how how = { .flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                          .mode = 0644,
                          .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS
                                     | RESOLVE_NO_MAGICLINKS };
  _cleanup_close_ int fd
      = root < 0 ? -1
                 : (int) syscall (SYS_openat2, root, "etc/resolv.conf", &how,
                                  sizeof how);
  if (fd < 0 || sr_write_all (fd, RESOLV_CONF, strlen (RESOLV_CONF)) < 0)
    return sr_fail (err, errno, "write the sandbox's /etc/resolv.conf");
  return 0;
}

bool
sb_egress_wanted (const struct sb_options *o)
{
  return o->allow_hosts != NULL && o->allow_hosts[0] != NULL;
}

int
sb_egress_check (const struct sb_options *o, sr_error **err)
{
  struct eg_policy p = { 0 };
  int r = 0;
  for (size_t i = 0; r == 0 && o->allow_hosts && o->allow_hosts[i]; i++)
    r = eg_policy_add_rule (&p, o->allow_hosts[i], err);
  for (size_t i = 0; r == 0 && o->add_hosts && o->add_hosts[i]; i++)
    r = eg_policy_add_host (&p, o->add_hosts[i], err);
  eg_policy_clear (&p);
  return r;
}

/* sandrun-egress beside the sandrun that runs (a build tree), else the
 * installed one.  argv[0], not /proc/self/exe: after the CVE-2019-5736
 * re-execution that names a private overlay. */
static char *
gateway_path (void)
{
  const char *self = program_invocation_name;
  const char *slash = strrchr (self, '/');
  if (slash != NULL)
    {
      char *p = xasprintf ("%.*s/sandrun-egress", (int) (slash - self), self);
      if (access (p, X_OK) == 0)
        return p;
      free (p);
    }
  return xstrdup (SR_PKGLIBEXECDIR "/sandrun-egress");
}

static void
push (char ***argv, const char *a, const char *b)
{
  strv_append (argv, a);
  strv_append (argv, b);
}

static char **
gateway_argv (const struct sb_options *o, const char *path, int ctl, int log)
{
  char **argv = NULL;
  char n[32];
  strv_append (&argv, path);
  snprintf (n, sizeof n, "%d", ctl);
  push (&argv, "--control-fd", n);
  snprintf (n, sizeof n, "%d", log);
  push (&argv, "--log-fd", n);
  for (size_t i = 0; o->allow_hosts && o->allow_hosts[i]; i++)
    push (&argv, "--allow-host", o->allow_hosts[i]);
  for (size_t i = 0; o->add_hosts && o->add_hosts[i]; i++)
    push (&argv, "--add-host", o->add_hosts[i]);
  if (o->net_max_bytes > 0)
    {
      snprintf (n, sizeof n, "%llu", (unsigned long long) o->net_max_bytes);
      push (&argv, "--max-bytes", n);
    }
  if (o->net_max_connections > 0)
    {
      snprintf (n, sizeof n, "%llu",
                (unsigned long long) o->net_max_connections);
      push (&argv, "--max-connections", n);
    }
  return argv;
}

/* The gateway's first line: "ready NSFD" or "error MESSAGE". */
static int
await_ready (struct sb_egress *e, sr_error **err)
{
  char line[1024];
  size_t n = 0;
  while (n < sizeof line - 1)
    {
      ssize_t r = read (e->control_fd, line + n, sizeof line - 1 - n);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      n += (size_t) r;
      if (memchr (line, '\n', n) != NULL)
        break;
    }
  line[n] = '\0';
  line[strcspn (line, "\n")] = '\0';
  long fd;
  if (str_has_prefix (line, "ready ") && sr_parse_long (line + 6, &fd) == 0)
    {
      e->netns = xasprintf ("/proc/%d/fd/%ld", (int) e->pid, fd);
      return 0;
    }
  if (str_has_prefix (line, "error "))
    return sr_fail (err, 0, "egress gateway: %s", line + 6);
  return sr_fail (err, 0, "egress gateway: exited before it was ready");
}

int
sb_egress_start (const struct sb_options *o, struct sb_egress *e,
                 sr_error **err)
{
  int sp[2];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
    return sr_fail (err, errno, "egress gateway: socketpair");
  e->control_fd = sp[0];
  _cleanup_close_ int child_ctl = sp[1];
  e->log_fd = memfd_create ("sandrun-egress-log", MFD_CLOEXEC);
  if (e->log_fd < 0)
    return sr_fail (err, errno, "egress gateway: memfd");
  /* the child's copies: the same fds without close-on-exec */
  _cleanup_close_ int ctl_fd = fcntl (child_ctl, F_DUPFD, 3);
  _cleanup_close_ int log_fd = fcntl (e->log_fd, F_DUPFD, 3);
  if (ctl_fd < 0 || log_fd < 0)
    return sr_fail (err, errno, "egress gateway: dup");
  _cleanup_free_ char *path = gateway_path ();
  _cleanup_strv_ char **argv = gateway_argv (o, path, ctl_fd, log_fd);
  static char *const env[] = { "PATH=/usr/bin:/bin", NULL };
  int r = posix_spawn (&e->pid, path, NULL, NULL, argv, env);
  if (r != 0)
    {
      e->pid = -1;
      return sr_fail (err, r, "egress gateway: start \"%s\"", path);
    }
  /* only the gateway holds its end now: one that dies before it says a
   * word ends the wait rather than hanging it */
  sr_close (child_ctl);
  sr_close (ctl_fd);
  child_ctl = ctl_fd = -1;
  return await_ready (e, err);
}

int
sb_egress_start_for (const struct sb_options *o, struct sb_bundle *b,
                     struct sb_egress *e, sr_error **err)
{
  if (sb_egress_write_resolv_conf (b->rootfs, err) < 0
      || sb_egress_start (o, e, err) < 0)
    return -1;
  b->netns = e->netns;
  return 0;
}

static char *
get_str (yajl_val v, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val s = yajl_tree_get (v, path, yajl_t_string);
  return s ? xstrdup (YAJL_GET_STRING (s)) : NULL;
}

static long long
get_int (yajl_val v, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val n = yajl_tree_get (v, path, yajl_t_number);
  return n && YAJL_IS_INTEGER (n) ? YAJL_GET_INTEGER (n) : 0;
}

/* A line that ends a stretch of the record: the summary, or a mark. */
static void
take_state (struct sb_egress *e, yajl_val v)
{
  const char *b[] = { "bytes_limit_hit", NULL },
             *c[] = { "connections_limit_hit", NULL };
  e->bytes_limit_hit = yajl_tree_get (v, b, yajl_t_true) != NULL;
  e->connections_limit_hit = yajl_tree_get (v, c, yajl_t_true) != NULL;
  e->unrecorded = get_int (v, "unrecorded");
}

static void
take_entry (struct sb_egress *e, yajl_val v)
{
  e->entries = xrealloc (e->entries, (e->n_entries + 1) * sizeof *e->entries);
  struct sb_egress_entry *x = &e->entries[e->n_entries++];
  x->time = get_str (v, "time");
  x->protocol = get_str (v, "protocol");
  x->host = get_str (v, "host");
  x->address = get_str (v, "address");
  x->decision = get_str (v, "decision");
  x->reason = get_str (v, "reason");
  x->port = get_int (v, "port");
  x->bytes_out = get_int (v, "bytes_out");
  x->bytes_in = get_int (v, "bytes_in");
  x->duration_ms = get_int (v, "duration_ms");
  if (str_eq (x->decision, "denied"))
    e->denied++;
}

/* One line; true when it is the one that ends the stretch (`token`'s mark,
 * or the summary when `token` is NULL). */
static bool
take_line (struct sb_egress *e, const char *line, const char *token)
{
  yajl_val v = yajl_tree_parse (line, NULL, 0);
  const char *summary[] = { "summary", NULL }, *mark[] = { "mark", NULL };
  bool end = false;
  yajl_val m = v != NULL ? yajl_tree_get (v, mark, yajl_t_string) : NULL;
  if (v == NULL || !YAJL_IS_OBJECT (v))
    e->incomplete = true;
  else if (m != NULL) /* a session's mark: its own execution's, or another's */
    end = token != NULL && str_eq (YAJL_GET_STRING (m), token);
  else if (yajl_tree_get (v, summary, yajl_t_true) != NULL)
    end = token == NULL;
  else
    take_entry (e, v);
  if (end)
    take_state (e, v);
  yajl_tree_free (v);
  return end;
}

ssize_t
sb_egress_take_record (struct sb_egress *e, char *buf, const char *token)
{
  for (char *l = buf, *nl; (nl = strchr (l, '\n')) != NULL; l = nl + 1)
    {
      *nl = '\0';
      if (take_line (e, l, token))
        return nl + 1 - buf;
    }
  return -1;
}

static void
read_record (struct sb_egress *e)
{
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  _cleanup_error_ sr_error *err = NULL;
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d", e->log_fd);
  if (sr_read_file_at (AT_FDCWD, path, LOG_MAX, &buf, &len, &err) < 0
      || sb_egress_take_record (e, buf, NULL) < 0 || e->unrecorded > 0)
    e->incomplete = true;
}

void
sb_egress_end (struct sb_egress *e)
{
  if (e->pid < 0)
    return;
  /* the gateway's cue to finish: the end of the control socket, and
   * SIGTERM in case a forked helper still holds a copy of our end */
  sr_close (e->control_fd);
  e->control_fd = -1;
  kill (e->pid, SIGTERM);
  int status;
  while (waitpid (e->pid, &status, 0) < 0 && errno == EINTR)
    ;
  e->pid = -1;
}

void
sb_egress_stop (struct sb_egress *e)
{
  if (e->pid < 0)
    return;
  sb_egress_end (e);
  read_record (e);
}

void
sb_egress_clear (struct sb_egress *e)
{
  if (e->pid > 0)
    {
      kill (e->pid, SIGKILL);
      while (waitpid (e->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    }
  sr_close (e->control_fd);
  sr_close (e->log_fd);
  for (size_t i = 0; i < e->n_entries; i++)
    {
      struct sb_egress_entry *x = &e->entries[i];
      free (x->time), free (x->protocol), free (x->host);
      free (x->address), free (x->decision), free (x->reason);
    }
  free (e->entries);
  free (e->netns);
  *e = (struct sb_egress) SB_EGRESS_INIT;
}

const char *
sb_egress_first_denial (const struct sb_egress *e)
{
  for (size_t i = 0; i < e->n_entries; i++)
    if (str_eq (e->entries[i].decision, "denied"))
      return e->entries[i].reason;
  return NULL;
}

void
sb_egress_describe (yajl_gen g, const struct sb_egress *e)
{
  yajl_gen_array_open (g);
  for (size_t i = 0; e != NULL && i < e->n_entries; i++)
    {
      const struct sb_egress_entry *x = &e->entries[i];
      yajl_gen_map_open (g);
      sr_json_gen_key_str (g, "time", x->time);
      sr_json_gen_key_str (g, "protocol", x->protocol);
      sr_json_gen_key_str (g, "host", x->host);
      sr_json_gen_key_int (g, "port", x->port);
      sr_json_gen_key_str (g, "address", x->address);
      sr_json_gen_key_str (g, "decision", x->decision);
      sr_json_gen_key_str (g, "reason", x->reason);
      sr_json_gen_key_int (g, "bytes_out", x->bytes_out);
      sr_json_gen_key_int (g, "bytes_in", x->bytes_in);
      sr_json_gen_key_int (g, "duration_ms", x->duration_ms);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

static void
gen_strv (yajl_gen g, const char *k, char **v)
{
  sr_json_gen_str (g, k);
  yajl_gen_array_open (g);
  for (size_t i = 0; v != NULL && v[i] != NULL; i++)
    sr_json_gen_str (g, v[i]);
  yajl_gen_array_close (g);
}

static void
gen_limit (yajl_gen g, const char *k, uint64_t v)
{
  sr_json_gen_str (g, k);
  if (v > 0)
    yajl_gen_integer (g, (long long) v);
  else
    yajl_gen_null (g);
}

void
sb_egress_describe_policy (yajl_gen g, const struct sb_options *o)
{
  sr_json_gen_key_str (g, "network",
                       sb_egress_wanted (o) ? "gateway" : o->net);
  if (!sb_egress_wanted (o))
    return;
  sr_json_gen_str (g, "egress");
  yajl_gen_map_open (g);
  gen_strv (g, "allow_hosts", o->allow_hosts);
  gen_strv (g, "add_hosts", o->add_hosts);
  gen_limit (g, "max_bytes", o->net_max_bytes);
  gen_limit (g, "max_connections", o->net_max_connections);
  yajl_gen_map_close (g);
}
