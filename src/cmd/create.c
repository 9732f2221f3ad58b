#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "sandrun/util.h"

enum
{
  OPT_CONSOLE_SOCKET = 256,
  OPT_PID_FILE,
  OPT_NO_PIVOT,
  OPT_NO_NEW_KEYRING,
  OPT_PRESERVE_FDS,
  OPT_KEEP,
  OPT_NO_SUBREAPER,
  OPT_PIDFD_SOCKET,
};

static const struct option create_options[] = {
  { "bundle", required_argument, NULL, 'b' },
  { "console-socket", required_argument, NULL, OPT_CONSOLE_SOCKET },
  { "pid-file", required_argument, NULL, OPT_PID_FILE },
  { "no-pivot", no_argument, NULL, OPT_NO_PIVOT },
  { "no-new-keyring", no_argument, NULL, OPT_NO_NEW_KEYRING },
  { "preserve-fds", required_argument, NULL, OPT_PRESERVE_FDS },
  /* run only */
  { "detach", no_argument, NULL, 'd' },
  { "keep", no_argument, NULL, OPT_KEEP },
  { "no-subreaper", no_argument, NULL, OPT_NO_SUBREAPER },
  { NULL, 0, NULL, 0 },
};

int
cmd_expect_operands (const char *cmd, int argc, char **argv, int first, int n,
                     const char *usage, sr_error **err)
{
  (void) argv;
  if (argc - first != n)
    return sr_fail (err, EINVAL, "%s: expected %d argument%s (usage: sandrun %s %s)", cmd, n,
                    n == 1 ? "" : "s", cmd, usage);
  return 0;
}

int
cmd_parse_create_opts (int argc, char **argv, struct sr_create_opts *opts, bool is_run,
                       sr_error **err)
{
  const char *cmd = is_run ? "run" : "create";
  int c;
  long n;

  opterr = 0;
  while ((c = getopt_long (argc, argv, is_run ? "+b:d" : "+b:", create_options, NULL)) != -1)
    {
      bool run_only = c == 'd' || c == OPT_KEEP || c == OPT_NO_SUBREAPER;
      if (c == '?' || (run_only && !is_run))
        return sr_fail (err, EINVAL, "%s: unknown option \"%s\"", cmd, argv[optind - 1]);
      switch (c)
        {
        case 'b': opts->bundle = optarg; break;
        case OPT_CONSOLE_SOCKET: opts->console_socket = optarg; break;
        case OPT_PID_FILE: opts->pid_file = optarg; break;
        case OPT_NO_PIVOT: opts->no_pivot = true; break;
        case OPT_NO_NEW_KEYRING: opts->no_new_keyring = true; break;
        case OPT_PRESERVE_FDS:
          if (sr_parse_long (optarg, &n) < 0 || n < 0 || n > 65536)
            return sr_fail (err, EINVAL, "%s: --preserve-fds: invalid number \"%s\"", cmd, optarg);
          opts->preserve_fds = (int) n;
          break;
        case 'd': opts->detach = true; break;
        case OPT_KEEP: opts->keep = true; break;
        case OPT_NO_SUBREAPER: break;
        case ':':
          return sr_fail (err, EINVAL, "%s: option \"%s\" needs a value", cmd, argv[optind - 1]);
        }
    }
  if (cmd_expect_operands (cmd, argc, argv, optind, 1, "[options] <container-id>", err) < 0)
    return -1;
  return optind;
}

int
cmd_create (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  struct sr_create_opts opts = { 0 };
  int first = cmd_parse_create_opts (argc, argv, &opts, false, err);
  if (first < 0)
    return 1;
  return sr_container_create (g, argv[first], &opts, NULL, err) < 0 ? 1 : 0;
}
