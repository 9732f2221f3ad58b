#include <errno.h>
#include <getopt.h>

#include "cmd/cmd.h"

static const struct option delete_options[] = {
  { "force", no_argument, NULL, 'f' },
  { NULL, 0, NULL, 0 },
};

int
cmd_delete (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  bool force = false;
  int c;

  opterr = 0;
  while ((c = getopt_long (argc, argv, "+f", delete_options, NULL)) != -1)
    {
      if (c != 'f')
        return sr_fail (err, EINVAL, "delete: unknown option \"%s\"", argv[optind - 1]), 1;
      force = true;
    }
  if (cmd_expect_operands ("delete", argc, argv, optind, 1, "[--force] <container-id>", err) < 0)
    return 1;
  return sr_container_delete (g, argv[optind], force, err) < 0 ? 1 : 0;
}
