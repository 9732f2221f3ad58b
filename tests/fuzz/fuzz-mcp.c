/* libFuzzer target: the MCP server's message handler, one message a line,
 * with executions off (a valid call becomes a tool error before spawning).
 * Whatever comes in must get a response or nothing, never a crash. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "mcp/mcp.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static int null = -1;
  static struct mcp_policy policy;
  static char *describe;
  if (null < 0)
    {
      char *argv[] = { "mcp", NULL };
      const char *rt;
      null = open ("/dev/null", O_WRONLY | O_CLOEXEC);
      mcp_policy_parse (1, argv, &policy, &rt, NULL);
      describe = mcp_policy_describe (&policy);
    }
  struct mcp_server s;
  mcp_server_init (&s, null);
  s.policy = policy;
  s.describe = describe;
  s.runtime = "/nonexistent";
  s.no_spawn = true;
  mcp_session_add (&s, "s");
  const char *p = (const char *) data, *end = p + size;
  while (p < end)
    {
      const char *nl = memchr (p, '\n', (size_t) (end - p));
      size_t n = nl != NULL ? (size_t) (nl - p) : (size_t) (end - p);
      mcp_handle_line (&s, p, n);
      p += n + 1;
    }
  s.describe = NULL;
  mcp_server_free (&s);
  return 0;
}
