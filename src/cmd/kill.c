#include <errno.h>
#include <getopt.h>
#include <signal.h>

#include "cmd/cmd.h"
#include "sandrun/signals.h"

static const struct option kill_options[] = {
  { "all", no_argument, NULL, 'a' },
  { NULL, 0, NULL, 0 },
};

int
cmd_kill (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  bool all = false;
  int c, signo = SIGTERM;

  opterr = 0;
  while ((c = getopt_long (argc, argv, "+a", kill_options, NULL)) != -1)
    {
      if (c != 'a')
        return sr_fail (err, EINVAL, "kill: unknown option \"%s\"", argv[optind - 1]), 1;
      all = true;
    }
  int n = argc - optind;
  if (n < 1 || n > 2)
    return sr_fail (err, EINVAL, "kill: usage: sandrun kill [--all] <container-id> [signal]"), 1;
  if (n == 2 && sr_signal_parse (argv[optind + 1], &signo, err) < 0)
    return sr_wrap (err, "kill \"%s\"", argv[optind]), 1;
  return sr_container_kill (g, argv[optind], signo, all, err) < 0 ? 1 : 0;
}
