#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "sandrun/features.h"
#include "sandrun/util.h"

int
cmd_features (const struct sr_globals *g, int argc, char **argv,
              sr_error **err)
{
  (void) g;
  if (cmd_expect_operands ("features", argc, argv, 1, 0, "", err) < 0)
    return 1;
  _cleanup_free_ char *doc = sr_features_json ();
  if (fputs (doc, stdout) == EOF || fflush (stdout) == EOF)
    return sr_fail (err, errno, "features: write"), 1;
  return 0;
}
