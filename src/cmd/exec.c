/* `exec [options] <container-id> <command> [args...]` or
 * `exec [options] -p process.json <container-id>`: runc's flags.  Exits with
 * the process's status in the foreground, 255 when the exec failed (as
 * runc). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "sandrun/exec.h"
#include "sandrun/util.h"

#define EXEC_FAILED 255
#define USAGE "[options] <container-id> <command> [args...] | -p process.json <container-id>"

enum
{
  OPT_CONSOLE_SOCKET = 256,
  OPT_CWD,
  OPT_PID_FILE,
  OPT_PROCESS_LABEL,
  OPT_APPARMOR,
  OPT_NO_NEW_PRIVS,
  OPT_PRESERVE_FDS,
  OPT_CGROUP,
  OPT_IGNORE_PAUSED,
};

static const struct option exec_options[] = {
  { "console-socket", required_argument, NULL, OPT_CONSOLE_SOCKET },
  { "cwd", required_argument, NULL, OPT_CWD },
  { "env", required_argument, NULL, 'e' },
  { "tty", no_argument, NULL, 't' },
  { "user", required_argument, NULL, 'u' },
  { "additional-gids", required_argument, NULL, 'g' },
  { "process", required_argument, NULL, 'p' },
  { "detach", no_argument, NULL, 'd' },
  { "pid-file", required_argument, NULL, OPT_PID_FILE },
  { "process-label", required_argument, NULL, OPT_PROCESS_LABEL },
  { "apparmor", required_argument, NULL, OPT_APPARMOR },
  { "no-new-privs", no_argument, NULL, OPT_NO_NEW_PRIVS },
  { "cap", required_argument, NULL, 'c' },
  { "preserve-fds", required_argument, NULL, OPT_PRESERVE_FDS },
  { "cgroup", required_argument, NULL, OPT_CGROUP },
  { "ignore-paused", no_argument, NULL, OPT_IGNORE_PAUSED },
  { NULL, 0, NULL, 0 },
};

/* What the parsed options own. */
struct exec_args
{
  struct sr_exec_opts o;
  char **env, **caps, **cgroups;
  uint32_t *gids;
};

static void
exec_args_clear (struct exec_args *a)
{
  strv_free (a->env);
  strv_free (a->caps);
  strv_free (a->cgroups);
  free (a->gids);
}

static int
parse_id (const char *s, uint32_t *out)
{
  long v;
  if (sr_parse_long (s, &v) < 0 || v < 0 || v >= (long) UINT32_MAX)
    return -1;
  *out = (uint32_t) v;
  return 0;
}

/* -u uid[:gid], numbers only (as runc). */
static int
parse_user (const char *s, struct sr_exec_opts *o, sr_error **err)
{
  _cleanup_free_ char *uid = xstrdup (s);
  char *gid = strchr (uid, ':');

  if (gid != NULL)
    *gid++ = '\0';
  if (parse_id (uid, &o->uid) < 0 || (gid != NULL && parse_id (gid, &o->gid) < 0))
    return sr_fail (err, EINVAL, "exec: --user \"%s\": expected uid[:gid]", s);
  o->uid_set = true;
  o->gid_set = gid != NULL;
  return 0;
}

static int
add_gid (struct exec_args *a, const char *s, sr_error **err)
{
  uint32_t gid;

  if (parse_id (s, &gid) < 0)
    return sr_fail (err, EINVAL, "exec: --additional-gids \"%s\": expected a gid", s);
  a->gids = xrealloc (a->gids, (a->o.additional_gids_len + 1) * sizeof *a->gids);
  a->gids[a->o.additional_gids_len++] = gid;
  a->o.additional_gids = a->gids;
  return 0;
}

static int
parse_option (struct exec_args *a, int c, sr_error **err)
{
  struct sr_exec_opts *o = &a->o;
  long n;

  switch (c)
    {
    case OPT_CONSOLE_SOCKET: o->console_socket = optarg; return 0;
    case OPT_CWD: o->cwd = optarg; return 0;
    case 'e': strv_append (&a->env, optarg); o->env = a->env; return 0;
    case 't': o->tty = true; return 0;
    case 'u': return parse_user (optarg, o, err);
    case 'g': return add_gid (a, optarg, err);
    case 'p': o->process_file = optarg; return 0;
    case 'd': o->detach = true; return 0;
    case OPT_PID_FILE: o->pid_file = optarg; return 0;
    case OPT_PROCESS_LABEL: o->process_label = optarg; return 0;
    case OPT_APPARMOR: o->apparmor = optarg; return 0;
    case OPT_NO_NEW_PRIVS: o->no_new_privs = true; return 0;
    case 'c': strv_append (&a->caps, optarg); o->caps = a->caps; return 0;
    case OPT_CGROUP: strv_append (&a->cgroups, optarg); o->cgroups = a->cgroups; return 0;
    case OPT_IGNORE_PAUSED: o->ignore_paused = true; return 0;
    case OPT_PRESERVE_FDS:
      if (sr_parse_long (optarg, &n) < 0 || n < 0 || n > 65536)
        return sr_fail (err, EINVAL, "exec: --preserve-fds: invalid number \"%s\"", optarg);
      o->preserve_fds = (int) n;
      return 0;
    default:
      return sr_fail (err, EINVAL, "exec: unknown option");
    }
}

int
cmd_exec (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  __attribute__ ((cleanup (exec_args_clear))) struct exec_args a = { 0 };
  int c, status = 0;

  opterr = 0;
  while ((c = getopt_long (argc, argv, "+:e:tu:g:p:dc:", exec_options, NULL)) != -1)
    {
      if (c == ':')
        return sr_fail (err, EINVAL, "exec: option \"%s\" needs a value", argv[optind - 1]),
               EXEC_FAILED;
      if (c == '?')
        return sr_fail (err, EINVAL, "exec: unknown option \"%s\"", argv[optind - 1]),
               EXEC_FAILED;
      if (parse_option (&a, c, err) < 0)
        return EXEC_FAILED;
    }
  if (optind >= argc)
    return sr_fail (err, EINVAL, "exec: expected a container id (usage: sandrun exec %s)",
                    USAGE), EXEC_FAILED;
  a.o.args = argv + optind + 1;
  if (sr_container_exec (g, argv[optind], &a.o, &status, err) < 0)
    return EXEC_FAILED;
  return status;
}
