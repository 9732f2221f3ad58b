#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "core/lifecycle.h"

int
cmd_state (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  _cleanup_container_ sr_container c = SR_CONTAINER_INIT;

  if (cmd_expect_operands ("state", argc, argv, 1, 1, "<container-id>", err) < 0)
    return 1;
  if (sr_container_load (g, argv[1], false, &c, err) < 0)
    return sr_wrap (err, "state \"%s\"", argv[1]), 1;
  char *json = sr_container_state_json (&c);
  fputs (json, stdout);
  free (json);
  return 0;
}
