#include "cmd/cmd.h"

int
cmd_start (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  if (cmd_expect_operands ("start", argc, argv, 1, 1, "<container-id>", err) < 0)
    return 1;
  return sr_container_start (g, argv[1], err) < 0 ? 1 : 0;
}
