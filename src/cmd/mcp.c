/* sandrun mcp [sandbox OPTIONS]: a Model Context Protocol server on stdio
 * whose tools run code in sandboxes under the policy these options set. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "mcp/mcp.h"
#include "sandrun/util.h"

int
cmd_mcp (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  struct mcp_server s;
  const char *runtime = NULL;

  mcp_server_init (&s, 1);
  if (mcp_policy_parse (argc, argv, &s.policy, &runtime, err) < 0)
    {
      mcp_policy_free (&s.policy);
      mcp_server_free (&s);
      return 125;
    }
  s.runtime = runtime != NULL ? runtime : "/proc/self/exe";
  s.root = g->root;
  s.describe = mcp_policy_describe (&s.policy);
  int r = mcp_serve (&s, err);
  mcp_policy_free (&s.policy);
  mcp_server_free (&s);
  return r < 0 ? 1 : 0;
}
