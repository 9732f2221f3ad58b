/* `sandrun sandbox [OPTIONS] -- COMMAND [ARG...]`: the flags into
 * sb_options; the work is src/sandbox/'s. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "sandbox/egress.h"
#include "sandbox/sandbox.h"
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

static int
parse (int argc, char **argv, struct sb_options *o, sr_error **err)
{
  int c;

  opterr = 0;
  while ((c = getopt_long (argc, argv, "+", sandbox_options, NULL)) != -1)
    {
      if (c == '?')
        return sr_fail (err, 0,
                        "sandbox: unknown option \"%s\" (see sandrun sandbox "
                        "--help)",
                        argv[optind - 1]);
      if (c == ':')
        return sr_fail (err, 0, "sandbox: option \"%s\" needs a value",
                        argv[optind - 1]);
      if (parse_one (c, optarg, o, err) < 0)
        return -1;
    }
  if (optind >= argc || strcmp (argv[optind - 1], "--") != 0)
    return sr_fail (err, 0,
                    "sandbox: expected -- COMMAND [ARG...] after the options");
  o->argv = strv_dup (argv + optind);
  if (sb_egress_check (o, err) < 0)
    return sr_wrap (err, "sandbox");
  return 0;
}

int
cmd_sandbox (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  struct sb_options o;
  int status = SB_EXIT_SANDRUN;

  sb_options_init (&o);
  if (parse (argc, argv, &o, err) < 0)
    status = SB_EXIT_SANDRUN;
  else if (sb_run (g, &o, &status, err) < 0)
    {
      sr_wrap (err, "sandbox");
      status = SB_EXIT_SANDRUN;
    }
  sb_options_clear (&o);
  return status;
}
