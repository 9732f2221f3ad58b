#include "cmd/cmd.h"
#include "sandrun/container_ops.h"

int
cmd_pause (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  if (cmd_expect_operands ("pause", argc, argv, 1, 1, "<container-id>", err) < 0)
    return 1;
  return sr_container_pause (g, argv[1], err) < 0 ? 1 : 0;
}
