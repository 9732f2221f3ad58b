/* sandrun: global flags, then the command (src/cmd/help.c's table). */
#include <getopt.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "oci-spec/oci-spec.h"
#include "sandrun/exeseal.h"
#include "sandrun/log.h"
#include "core/state.h"
#include "sandrun/util.h"

static void
version (void)
{
  const struct scmp_version *v = seccomp_version ();
  /* runc's lines, in runc's order (tools parse "version", "commit" and
   * "spec"); runc's "go:" line has no counterpart. */
  printf ("sandrun version %s\ncommit: %s\nspec: %s\nlibseccomp: %u.%u.%u\n",
          PACKAGE_VERSION, SANDRUN_COMMIT, OCI_SPEC_VERSION, v->major,
          v->minor, v->micro);
}

enum
{
  OPT_ROOT = 256,
  OPT_LOG,
  OPT_LOG_FORMAT,
  OPT_DEBUG,
  OPT_SYSTEMD_CGROUP,
  OPT_ROOTLESS,
};

static const struct option global_options[] = {
  { "root", required_argument, NULL, OPT_ROOT },
  { "log", required_argument, NULL, OPT_LOG },
  { "log-format", required_argument, NULL, OPT_LOG_FORMAT },
  { "debug", no_argument, NULL, OPT_DEBUG },
  { "systemd-cgroup", no_argument, NULL, OPT_SYSTEMD_CGROUP },
  { "rootless", required_argument, NULL, OPT_ROOTLESS },
  { "version", no_argument, NULL, 'v' },
  { "help", no_argument, NULL, 'h' },
  { NULL, 0, NULL, 0 },
};

/* Returns the index of the command name, or -1 (exit code in *status). */
static int
parse_globals (int argc, char **argv, struct sr_globals *g, int *status)
{
  int c;

  opterr = 0;
  while ((c = getopt_long (argc, argv, "+vh", global_options, NULL)) != -1)
    switch (c)
      {
      case OPT_ROOT: g->root = optarg; break;
      case OPT_LOG: g->log = optarg; break;
      case OPT_LOG_FORMAT: g->log_format = optarg; break;
      case OPT_DEBUG: g->debug = true; break;
      case OPT_SYSTEMD_CGROUP: g->systemd_cgroup = true; break;
      case OPT_ROOTLESS: break; /* runc's; sandrun decides by the euid */
      case 'v': version (); *status = 0; return -1;
      case 'h': cmd_help_main (stdout); *status = 0; return -1;
      default:
        fprintf (stderr, "sandrun: unknown global option \"%s\"\n", argv[optind - 1]);
        *status = 1;
        return -1;
      }
  if (optind >= argc)
    {
      cmd_help_main (stderr);
      *status = 1;
      return -1;
    }
  return optind;
}

/* `sandbox exec|cp|list|stop` never enter a container: a session's
 * supervisor, protected since `sandbox start`, runs its executions. */
static bool
works_from_outside (int argc, char **argv)
{
  static const char *const subs[] = { "exec", "cp", "list", "stop" };
  if (argc < 2 || strcmp (argv[0], "sandbox") != 0)
    return false;
  for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
    if (strcmp (argv[1], subs[i]) == 0)
      return true;
  return false;
}

int
main (int argc, char **argv, char **envp)
{
  struct sr_globals g = { .root = SR_DEFAULT_ROOT, .log_format = "text" };
  _cleanup_error_ sr_error *err = NULL;
  int status = 1;

  sr_environ_note (envp);
  int first = parse_globals (argc, argv, &g, &status);
  if (first < 0)
    return status;
  if (strcmp (g.log_format, "text") != 0 && strcmp (g.log_format, "json") != 0)
    {
      fprintf (stderr, "sandrun: --log-format: expected text or json, got \"%s\"\n", g.log_format);
      return 1;
    }
  if (sr_log_init (g.log, strcmp (g.log_format, "json") == 0, g.debug, &err) < 0)
    {
      sr_log_fatal_error (err);
      return 1;
    }
  if (cmd_wants_help (argv[first], argc - first, argv + first))
    return cmd_help_command (argv[first], stdout), 0;
  /* Before anything can enter a container (CVE-2019-5736). */
  if (!works_from_outside (argc - first, argv + first)
      && sr_exeseal_ensure (argv[first], argv, &err) < 0)
    {
      sr_log_fatal_error (err);
      return 1;
    }

  sr_cmd_fn fn = cmd_find (argv[first]);
  if (fn == NULL)
    {
      fprintf (stderr, "sandrun: unknown command \"%s\" (see sandrun --help)\n",
               argv[first]);
      return 1;
    }
  optind = 0; /* a full getopt reset for the command's own flags */
  status = fn (&g, argc - first, argv + first, &err);
  if (err != NULL)
    sr_log_fatal_error (err);
  return status;
}
