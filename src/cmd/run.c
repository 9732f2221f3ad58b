#include "cmd/cmd.h"

int
cmd_run (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  struct sr_create_opts opts = { .start_now = true };
  int status = 0;
  int first = cmd_parse_create_opts (argc, argv, &opts, true, err);
  if (first < 0)
    return 1;
  if (sr_container_create (g, argv[first], &opts, &status, err) < 0)
    return 1;
  return status;
}
