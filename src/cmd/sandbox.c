/* `sandrun sandbox [OPTIONS] -- COMMAND [ARG...]`: the flags into
 * sb_options; the work is src/sandbox/'s. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "sandbox/egress.h"
#include "sandbox/sandbox.h"
#include "sandbox/session.h"
#include "sandrun/util.h"

enum
{
  OPT_ROOTFS = 256,
  OPT_WORKDIR,
  OPT_RO_BIND,
  OPT_COLLECT,
  OPT_ENV,
  OPT_STDIN,
  OPT_TIMEOUT,
  OPT_MEMORY,
  OPT_CPUS,
  OPT_CPU_TIME,
  OPT_PIDS,
  OPT_OUTPUT_LIMIT,
  OPT_FILE_SIZE,
  OPT_DISK,
  OPT_TMP_SIZE,
  OPT_OPEN_FILES,
  OPT_NET,
  OPT_ALLOW_HOST,
  OPT_ADD_HOST,
  OPT_NET_MAX_BYTES,
  OPT_NET_MAX_CONNECTIONS,
  OPT_QUIET,
  OPT_RECEIPT,
  OPT_AUDIT_LOG,
  /* sessions */
  OPT_NAME,
  OPT_IDLE_TIMEOUT,
  OPT_MAX_LIFETIME,
  OPT_KERNEL,
  OPT_CODE,
  OPT_FORMAT,
};

static const struct option sandbox_options[] = {
  { "rootfs", required_argument, NULL, OPT_ROOTFS },
  { "workdir", required_argument, NULL, OPT_WORKDIR },
  { "ro-bind", required_argument, NULL, OPT_RO_BIND },
  { "collect", required_argument, NULL, OPT_COLLECT },
  { "env", required_argument, NULL, OPT_ENV },
  { "stdin", required_argument, NULL, OPT_STDIN },
  { "timeout", required_argument, NULL, OPT_TIMEOUT },
  { "memory", required_argument, NULL, OPT_MEMORY },
  { "cpus", required_argument, NULL, OPT_CPUS },
  { "cpu-time", required_argument, NULL, OPT_CPU_TIME },
  { "pids", required_argument, NULL, OPT_PIDS },
  { "output-limit", required_argument, NULL, OPT_OUTPUT_LIMIT },
  { "file-size", required_argument, NULL, OPT_FILE_SIZE },
  { "disk", required_argument, NULL, OPT_DISK },
  { "tmp-size", required_argument, NULL, OPT_TMP_SIZE },
  { "open-files", required_argument, NULL, OPT_OPEN_FILES },
  { "net", required_argument, NULL, OPT_NET },
  { "allow-host", required_argument, NULL, OPT_ALLOW_HOST },
  { "add-host", required_argument, NULL, OPT_ADD_HOST },
  { "net-max-bytes", required_argument, NULL, OPT_NET_MAX_BYTES },
  { "net-max-connections", required_argument, NULL, OPT_NET_MAX_CONNECTIONS },
  { "quiet", no_argument, NULL, OPT_QUIET },
  { "receipt", required_argument, NULL, OPT_RECEIPT },
  { "audit-log", required_argument, NULL, OPT_AUDIT_LOG },
  { "name", required_argument, NULL, OPT_NAME },
  { "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
  { "max-lifetime", required_argument, NULL, OPT_MAX_LIFETIME },
  { "kernel", required_argument, NULL, OPT_KERNEL },
  { "code", required_argument, NULL, OPT_CODE },
  { "format", required_argument, NULL, OPT_FORMAT },
  { NULL, 0, NULL, 0 },
};

static int
bad (sr_error **err, const char *opt, const char *value, const char *expected)
{
  return sr_fail (err, 0, "sandbox: --%s \"%s\": expected %s", opt, value,
                  expected);
}

static int
parse_size_opt (const char *opt, const char *v, uint64_t min, uint64_t *out,
                sr_error **err)
{
  if (sb_parse_size (v, out) < 0 || *out < min)
    return bad (err, opt, v, "a size such as 256M");
  return 0;
}

static int
parse_count (const char *opt, const char *v, long max, uint64_t *out,
             sr_error **err)
{
  long n;
  if (sr_parse_long (v, &n) < 0 || n < 1 || n > max)
    return bad (err, opt, v, "a whole number from 1");
  *out = (uint64_t) n;
  return 0;
}

static int
parse_env (const char *v, struct sb_options *o, sr_error **err)
{
  const char *eq = strchr (v, '=');
  if (eq == NULL || eq == v)
    return bad (err, "env", v, "NAME=VALUE");
  strv_append (&o->env, v);
  return 0;
}

static void
set_str (char **field, const char *v)
{
  free (*field);
  *field = xstrdup (v);
}

/* One option; -1 with *err on a bad value. */
static int
parse_one (int c, const char *v, struct sb_options *o, sr_error **err)
{
  uint64_t n;
  if (c < OPT_ROOTFS || c >= OPT_NAME)
    return 0;
  const char *name = sandbox_options[c - OPT_ROOTFS].name;

  switch (c)
    {
    case OPT_ROOTFS:
      set_str (&o->rootfs, v);
      return 0;
    case OPT_WORKDIR:
      set_str (&o->workdir, v);
      return 0;
    case OPT_COLLECT:
      set_str (&o->collect, v);
      return 0;
    case OPT_STDIN:
      set_str (&o->stdin_file, v);
      return 0;
    case OPT_RECEIPT:
      set_str (&o->receipt, v);
      return 0;
    case OPT_AUDIT_LOG:
      set_str (&o->audit_log, v);
      return 0;
    case OPT_QUIET:
      o->quiet = true;
      return 0;
    case OPT_ENV:
      return parse_env (v, o, err);
    case OPT_RO_BIND:
      o->ro_binds = xrealloc (o->ro_binds,
                              (o->ro_binds_len + 1) * sizeof *o->ro_binds);
      if (sb_parse_bind (v, &o->ro_binds[o->ro_binds_len], err) < 0)
        return sr_wrap (err, "sandbox: --ro-bind \"%s\"", v);
      o->ro_binds_len++;
      return 0;
    case OPT_NET:
      if (strcmp (v, "none") != 0)
        return bad (err, name, v, "none (the only network mode)");
      return 0;
    case OPT_ALLOW_HOST:
      strv_append (&o->allow_hosts, v);
      return 0;
    case OPT_ADD_HOST:
      strv_append (&o->add_hosts, v);
      return 0;
    case OPT_NET_MAX_BYTES:
      return parse_size_opt (name, v, 1, &o->net_max_bytes, err);
    case OPT_NET_MAX_CONNECTIONS:
      return parse_count (name, v, 1 << 30, &o->net_max_connections, err);
    case OPT_TIMEOUT:
      if (sb_parse_duration_ms (v, &o->timeout_ms) < 0 || o->timeout_ms <= 0)
        return bad (err, name, v, "a duration such as 10s or 500ms");
      return 0;
    case OPT_CPU_TIME:
      if (sb_parse_duration_ms (v, (int64_t *) &n) < 0 || n < 1000)
        return bad (err, name, v, "whole CPU seconds such as 5s");
      o->cpu_time_s = n / 1000;
      return 0;
    case OPT_CPUS:
      if (sb_parse_cpus (v, &o->cpus_milli) < 0)
        return bad (err, name, v, "a number of CPUs such as 0.5 or 2");
      return 0;
    case OPT_MEMORY:
      return parse_size_opt (name, v, 4 << 20, &o->memory, err);
    case OPT_OUTPUT_LIMIT:
      return parse_size_opt (name, v, 0, &o->output_limit, err);
    case OPT_FILE_SIZE:
      return parse_size_opt (name, v, 1, &o->file_size, err);
    case OPT_DISK:
      return parse_size_opt (name, v, 1 << 20, &o->disk, err);
    case OPT_TMP_SIZE:
      return parse_size_opt (name, v, 1 << 20, &o->tmp_size, err);
    case OPT_PIDS:
      if (parse_count (name, v, 1 << 22, &n, err) < 0)
        return -1;
      o->pids = (int64_t) n;
      return 0;
    case OPT_OPEN_FILES:
      return parse_count (name, v, 1 << 20, &o->open_files, err);
    }
  return 0;
}

/* Which command the flags are for: each takes its own set. */
enum mode
{
  MODE_ONESHOT,
  MODE_START, /* the one-shot's sandbox options and the session's, no command */
  MODE_EXEC,  /* --timeout, --output-limit, --env, --stdin, output, --code */
  MODE_STORED, /* a session's stored start flags */
};

struct session_args
{
  struct sb_session_opts so;
  char *code;
  bool code_set;
  char *format;
};

static bool
allowed (enum mode m, int c)
{
  switch (m)
    {
    case MODE_ONESHOT:
      return c < OPT_NAME;
    case MODE_START:
    case MODE_STORED:
      return c != OPT_STDIN && c != OPT_COLLECT && c != OPT_CODE
             && c != OPT_FORMAT;
    case MODE_EXEC:
      return c == OPT_TIMEOUT || c == OPT_OUTPUT_LIMIT || c == OPT_ENV
             || c == OPT_STDIN || c == OPT_QUIET || c == OPT_RECEIPT
             || c == OPT_AUDIT_LOG || c == OPT_CODE;
    }
  return false;
}

static int
parse_session_one (int c, const char *v, struct session_args *a,
                   sr_error **err)
{
  const char *name = sandbox_options[c - OPT_ROOTFS].name;
  switch (c)
    {
    case OPT_NAME:
      set_str (&a->so.name, v);
      return 0;
    case OPT_CODE:
      set_str (&a->code, v);
      a->code_set = true;
      return 0;
    case OPT_FORMAT:
      if (!str_eq (v, "json") && !str_eq (v, "table"))
        return bad (err, name, v, "json or table");
      set_str (&a->format, v);
      return 0;
    case OPT_KERNEL:
      if (!str_eq (v, "python"))
        return bad (err, name, v, "python (the only kernel)");
      set_str (&a->so.kernel, v);
      return 0;
    case OPT_IDLE_TIMEOUT:
    case OPT_MAX_LIFETIME:
      {
        int64_t ms;
        if (sb_parse_duration_ms (v, &ms) < 0 || ms <= 0)
          return bad (err, name, v, "a duration such as 10m or 30s");
        *(c == OPT_IDLE_TIMEOUT ? &a->so.idle_ms : &a->so.lifetime_ms) = ms;
        return 0;
      }
    }
  return 0;
}

static int
parse (int argc, char **argv, enum mode m, struct sb_options *o,
       struct session_args *a, sr_error **err)
{
  int c;

  opterr = 0;
  optind = 0;
  while ((c = getopt_long (argc, argv, "+", sandbox_options, NULL)) != -1)
    {
      if (c == '?' || (c >= OPT_ROOTFS && !allowed (m, c)))
        return sr_fail (err, 0,
                        "sandbox: unknown option \"%s\" (see sandrun sandbox "
                        "--help)",
                        argv[optind - 1]);
      if (c == ':')
        return sr_fail (err, 0, "sandbox: option \"%s\" needs a value",
                        argv[optind - 1]);
      if (c >= OPT_NAME ? parse_session_one (c, optarg, a, err) < 0
                        : parse_one (c, optarg, o, err) < 0)
        return -1;
    }
  if (m == MODE_START || m == MODE_STORED)
    {
      if (optind < argc)
        return sr_fail (err, 0,
                        "sandbox start: unexpected \"%s\" (a session runs its "
                        "commands with sandbox exec)",
                        argv[optind]);
      if (m == MODE_START && sb_egress_check (o, err) < 0)
        return sr_wrap (err, "sandbox start");
      return 0;
    }
  if (m == MODE_EXEC && a->code_set)
    return optind < argc ? sr_fail (
               err, 0, "sandbox exec: --code and a command: give one")
                         : 0;
  if (m == MODE_EXEC && optind >= argc)
    return 0; /* code on stdin, for a kernel session */
  if (optind >= argc || strcmp (argv[optind - 1], "--") != 0)
    return sr_fail (err, 0,
                    "sandbox: expected -- COMMAND [ARG...] after the options");
  o->argv = strv_dup (argv + optind);
  if (sb_egress_check (o, err) < 0)
    return sr_wrap (err, "sandbox");
  return 0;
}

static void
session_args_clear (struct session_args *a)
{
  sb_session_opts_clear (&a->so);
  free (a->code);
  free (a->format);
}

static int
session_start (const struct sr_globals *g, int argc, char **argv,
               sr_error **err)
{
  struct sb_options o;
  struct session_args a = { .so = { .idle_ms = SB_DEFAULT_IDLE_MS,
                                    .lifetime_ms = SB_DEFAULT_LIFETIME_MS } };
  int r = -1;

  sb_options_init (&o);
  if (parse (argc, argv, MODE_START, &o, &a, err) == 0)
    {
      if (a.so.name == NULL)
        r = sr_fail (err, 0, "sandbox start: --name NAME is required");
      else
        {
          a.so.flags = strv_dup (argv + 1);
          r = sb_session_start (g, &o, &a.so, err);
          if (r < 0)
            sr_wrap (err, "sandbox start");
        }
    }
  sb_options_clear (&o);
  session_args_clear (&a);
  return r < 0 ? SB_EXIT_SANDRUN : 0;
}

/* The session's own options, then this execution's on top. */
static int
exec_options (const struct sb_session *s, int argc, char **argv,
              struct sb_options *o, struct session_args *a, sr_error **err)
{
  struct session_args stored = { 0 };
  size_t n = strv_len (s->flags);
  _cleanup_strv_ char **sargv = xcalloc (n + 2, sizeof *sargv);

  sargv[0] = xstrdup ("start");
  for (size_t i = 0; i < n; i++)
    sargv[i + 1] = xstrdup (s->flags[i]);
  int r = parse ((int) n + 1, sargv, MODE_STORED, o, &stored, err);
  session_args_clear (&stored);
  free (o->receipt);
  free (o->audit_log);
  o->receipt = o->audit_log = NULL;
  o->quiet = false;
  if (r < 0)
    return -1;
  return parse (argc, argv, MODE_EXEC, o, a, err);
}

static char *
read_stdin (sr_error **err)
{
  size_t len = 0, cap = 65536;
  char *buf = xmalloc (cap + 1);
  ssize_t n;
  while ((n = read (0, buf + len, cap - len)) > 0)
    {
      len += (size_t) n;
      if (len == cap)
        {
          if (cap >= (1 << 20))
            {
              free (buf);
              sr_fail (err, E2BIG,
                       "sandbox exec: the code on stdin is larger than 1 MiB");
              return NULL;
            }
          cap *= 2;
          buf = xrealloc (buf, cap + 1);
        }
    }
  buf[len] = '\0';
  return buf;
}

/* What to run: a command, or (kernel sessions) python code from --code or
 * stdin; -1 with *err when the arguments do not fit the session. */
static int
exec_what (const struct sb_session *s, struct sb_options *o,
           struct session_args *a, char **code, sr_error **err)
{
  if (s->kernel == NULL && a->code_set)
    return sr_fail (
        err, 0,
        "sandbox exec: --code needs a session started with --kernel "
        "python");
  if (o->argv != NULL)
    return 0;
  if (s->kernel == NULL)
    return sr_fail (
        err, 0,
        "sandbox exec: expected -- COMMAND [ARG...] after the options");
  *code = a->code_set ? xstrdup (a->code) : read_stdin (err);
  if (*code == NULL)
    return -1;
  char *pyargv[] = { "python3", "-c", *code, NULL };
  o->argv = strv_dup (pyargv);
  return 0;
}

static int
session_exec (const struct sr_globals *g, int argc, char **argv,
              sr_error **err)
{
  struct sb_session s = { .pidfd = -1 };
  struct sb_options o;
  struct session_args a = { 0 };
  _cleanup_free_ char *code = NULL;
  int status = SB_EXIT_SANDRUN;

  sb_options_init (&o);
  if (argc < 2 || argv[1][0] == '-')
    sr_fail (err, 0,
             "sandbox exec: expected a session name: sandbox exec NAME "
             "[OPTIONS] -- "
             "COMMAND");
  else if (sb_session_open (g, argv[1], &s, err) < 0)
    sr_wrap (err, "sandbox exec");
  else if (exec_options (&s, argc - 1, argv + 1, &o, &a, err) == 0
           && exec_what (&s, &o, &a, &code, err) == 0)
    {
      if (sb_session_enter (&s, err) < 0
          || sb_session_exec (g, &s, &o, code, &status, err) < 0)
        sr_wrap (err, "sandbox exec");
    }
  if (*err != NULL)
    status = SB_EXIT_SANDRUN;
  sb_session_close (&s);
  sb_options_clear (&o);
  session_args_clear (&a);
  return status;
}

static int
session_cp (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  struct sb_session s;
  const char *colon = argc == 3 ? strchr (argv[1], ':') : NULL;
  _cleanup_free_ char *name = NULL;
  const char *src, *dst;
  bool in;

  memset (&s, 0, sizeof s);
  s.pidfd = -1;
  if (argc == 4 && strchr (argv[1], ':') == NULL)
    name = xstrdup (argv[1]), src = argv[2], dst = argv[3], in = true;
  else if (colon != NULL)
    name = strndup (argv[1], (size_t) (colon - argv[1])), src = colon + 1,
    dst = argv[2], in = false;
  else
    {
      sr_fail (
          err, 0,
          "sandbox cp: expected NAME HOST_SRC SESSION_DST or NAME:SESSION_SRC "
          "HOST_DST");
      return SB_EXIT_SANDRUN;
    }
  int r = sb_session_open (g, name, &s, err);
  if (r == 0)
    r = sb_session_enter (&s, err);
  if (r == 0)
    {
      sb_session_touch (&s);
      r = sb_session_cp (&s, src, dst, in, err);
    }
  if (r < 0)
    sr_wrap (err, "sandbox cp");
  sb_session_close (&s);
  return r < 0 ? SB_EXIT_SANDRUN : 0;
}

static int
session_list (const struct sr_globals *g, int argc, char **argv,
              sr_error **err)
{
  struct sb_options o;
  struct session_args a = { 0 };
  int r;

  sb_options_init (&o);
  if (argc == 3 && str_eq (argv[1], "--format"))
    r = parse_session_one (OPT_FORMAT, argv[2], &a, err);
  else if (argc == 2 && str_has_prefix (argv[1], "--format="))
    r = parse_session_one (OPT_FORMAT, argv[1] + 9, &a, err);
  else
    r = argc == 1
            ? 0
            : sr_fail (err, 0, "sandbox list: expected [--format json|table]");
  if (r == 0)
    r = sb_session_list (g, a.format != NULL && str_eq (a.format, "json"),
                         err);
  if (r < 0)
    sr_wrap (err, "sandbox list");
  sb_options_clear (&o);
  session_args_clear (&a);
  return r < 0 ? SB_EXIT_SANDRUN : 0;
}

static int
session_stop (const struct sr_globals *g, int argc, char **argv,
              sr_error **err)
{
  if (argc != 2)
    {
      sr_fail (err, 0, "sandbox stop: expected a session name");
      return SB_EXIT_SANDRUN;
    }
  if (sb_session_stop (g, argv[1], err) < 0)
    {
      sr_wrap (err, "sandbox stop");
      return SB_EXIT_SANDRUN;
    }
  return 0;
}

int
cmd_sandbox (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  struct sb_options o;
  int status = SB_EXIT_SANDRUN;

  struct session_args a = { 0 };
  static const struct
  {
    const char *name;
    int (*fn) (const struct sr_globals *, int, char **, sr_error **);
  } subs[] = { { "start", session_start },
               { "exec", session_exec },
               { "cp", session_cp },
               { "list", session_list },
               { "stop", session_stop } };

  for (size_t i = 0; argc > 1 && i < ARRAY_SIZE (subs); i++)
    if (str_eq (argv[1], subs[i].name))
      return subs[i].fn (g, argc - 1, argv + 1, err);
  sb_options_init (&o);
  if (parse (argc, argv, MODE_ONESHOT, &o, &a, err) < 0)
    status = SB_EXIT_SANDRUN;
  else if (sb_run (g, &o, &status, err) < 0)
    {
      sr_wrap (err, "sandbox");
      status = SB_EXIT_SANDRUN;
    }
  sb_options_clear (&o);
  session_args_clear (&a);
  return status;
}
