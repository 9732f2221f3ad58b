/* The MCP server's message handling without executions: JSON-RPC errors,
 * version negotiation, argument checks, the policy's options, and the JSON
 * helpers (UTF-8 cuts, base64, depth). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mcp/mcp.h"
#include "sandrun/util.h"
#include "unit.h"

static struct mcp_server srv;
static int out;

/* Feed one line; return what the server wrote (malloc'd). */
static char *
feed (const char *line)
{
  if (ftruncate (out, 0) < 0 || lseek (out, 0, SEEK_SET) < 0)
    abort ();
  mcp_handle_line (&srv, line, strlen (line));
  off_t n = lseek (out, 0, SEEK_CUR);
  char *buf = xcalloc (1, (size_t) n + 1);
  if (pread (out, buf, (size_t) n, 0) != n)
    abort ();
  return buf;
}

static void
expect (const char *line, const char *want, const char *what)
{
  _cleanup_free_ char *got = feed (line);
  CHECK (strstr (got, want) != NULL, "%s", what);
  if (strstr (got, want) == NULL)
    printf ("#   got: %s#   want: %s\n", got, want);
}

#define CALL(args)                                                            \
  "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/"                         \
  "call\",\"params\":{\"name\":\"run_code\",\"arguments\":" args "}}"

static void
test_rpc (void)
{
  expect ("nope", "\"id\":null,\"error\":{\"code\":-32700",
          "garbage: parse error");
  expect ("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", "-32600",
          "a batch: invalid request");
  expect ("{\"id\":1,\"method\":\"ping\"}", "-32600",
          "no jsonrpc member: invalid request");
  expect ("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", "-32600",
          "a fractional id: invalid request");
  expect ("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\"}",
          "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}", "ping");
  expect (
      "{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890,\"method\":\"ping\"}",
      "-32600", "an id beyond 64 bits: invalid request");
  expect ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x/y\"}",
          "\"code\":-32601", "unknown method");
  _cleanup_free_ char *none = feed (
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  CHECK_STR (none, "", "a notification gets no response");
  _cleanup_free_ char *blank = feed ("   \r");
  CHECK_STR (blank, "", "a blank line is ignored");
  char *deep = xmalloc (200001);
  memset (deep, '{', 200000);
  deep[200000] = '\0';
  expect (deep, "nested too deeply", "deep nesting is refused before parsing");
  free (deep);
  expect ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
          "{\"protocolVersion\":\"2024-11-05\"}}",
          "\"protocolVersion\":\"2024-11-05\"",
          "initialize: the client's version when known");
  CHECK (!srv.structured, "2024-11-05: no structuredContent");
  expect ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
          "{\"protocolVersion\":\"2030-01-01\"}}",
          "\"protocolVersion\":\"2025-11-25\"",
          "initialize: the newest otherwise");
  CHECK (srv.structured, "2025-11-25: structuredContent");
  expect ("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
          "\"name\":\"session_stop\"", "tools/list");
}

static void
test_args (void)
{
  expect (CALL ("{\"language\":\"ruby\",\"code\":\"1\"}"),
          "must be one of python, shell", "language checked");
  expect (CALL ("{\"language\":\"python\"}"), "missing argument \\\"code\\\"",
          "code required");
  expect (CALL ("{\"language\":\"python\",\"code\":\"1\",\"x\":1}"),
          "unknown argument \\\"x\\\"", "unknown argument");
  expect (CALL ("{\"language\":\"python\",\"code\":\"1\",\"timeout\":0}"),
          "positive number", "timeout > 0");
  expect (CALL ("{\"language\":\"python\",\"code\":\"1\",\"files\":{\"/etc/"
                "x\":\"\"}}"),
          "-32602", "absolute file path refused");
  expect (CALL ("{\"language\":\"python\",\"code\":\"1\",\"files\":{\"a/../../"
                "x\":\"\"}}"),
          "-32602", "dot-dot file path refused");
  expect (
      CALL ("{\"language\":\"python\",\"code\":\"1\",\"session\":\"other\"}"),
      "no session \\\"other\\\"", "foreign session refused");
  expect (CALL ("[]"), "arguments must be an object",
          "arguments must be an object");
  /* valid, but this server spawns nothing: a tool error, not a JSON-RPC one */
  expect (CALL ("{\"language\":\"shell\",\"code\":\"true\"}"),
          "\"isError\":true", "a valid call that cannot run: a tool error");
  mcp_session_add (&srv, "mine");
  expect ("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/"
          "call\",\"params\":{\"name\":\"session_read_file\","
          "\"arguments\":{\"session\":\"mine\",\"path\":\"/etc/shadow\"}}}",
          "expected a path under /work or /tmp",
          "session paths stay in /work and /tmp");
  expect ("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/"
          "call\",\"params\":{\"name\":\"session_write_file\","
          "\"arguments\":{\"session\":\"mine\",\"path\":\"a\",\"content\":\"!!"
          "\",\"encoding\":\"base64\"}}}",
          "not base64", "base64 content checked");
}

static void
test_policy (void)
{
  struct mcp_policy p;
  const char *rt;
  _cleanup_error_ sr_error *err = NULL;
  char *ok[] = { "mcp",
                 "--timeout",
                 "3s",
                 "--memory=128M",
                 "--allow-host",
                 "api.example.com",
                 "--idle-timeout",
                 "1m",
                 NULL };
  CHECK (mcp_policy_parse (8, ok, &p, &rt, &err) == 0,
         "policy: options parsed");
  CHECK (p.timeout_ms == 3000, "policy: --timeout kept as the cap");
  CHECK_STR (p.memory, "128M", "policy: --memory=VALUE form");
  CHECK_STR (p.sandbox_opts[0], "--memory",
             "policy: passed on to the sandbox");
  CHECK (strv_len (p.sandbox_opts) == 4 && strv_len (p.session_opts) == 2,
         "policy: session-only options apart");
  _cleanup_free_ char *d = mcp_policy_describe (&p);
  CHECK (strstr (d, "network only to api.example.com") != NULL
             && strstr (d, "timeout 3s") != NULL,
         "policy: described: %s", d);
  mcp_policy_free (&p);
  char *bad[] = { "mcp", "--receipt", "x", NULL };
  CHECK (mcp_policy_parse (3, bad, &p, &rt, &err) < 0
             && strstr (err->msg, "set by the server") != NULL,
         "policy: --receipt refused");
  mcp_policy_free (&p);
  CHECK (mcp_parse_duration_ms ("1.5s") == 1500
             && mcp_parse_duration_ms ("250ms") == 250
             && mcp_parse_duration_ms ("2m") == 120000
             && mcp_parse_duration_ms ("7") == 7000
             && mcp_parse_duration_ms ("soon") == -1
             && mcp_parse_duration_ms ("-1s") == -1,
         "durations");
  _cleanup_free_ char *a = mcp_format_ms (2000), *b = mcp_format_ms (1500);
  CHECK (strcmp (a, "2s") == 0 && strcmp (b, "1500ms") == 0,
         "durations written back");
}

static void
test_json (void)
{
  const char *s = "a\xc3\xa9z"; /* a é z */
  CHECK (sr_utf8_prefix (s, 4, 2) == 1,
         "UTF-8: a cut never splits a character");
  CHECK (sr_utf8_prefix (s, 4, 3) == 3, "UTF-8: whole characters kept");
  CHECK (!mcp_utf8_valid ("\xff", 1) && !mcp_utf8_valid ("\xed\xa0\x80", 3)
             && mcp_utf8_valid (s, 4),
         "UTF-8: invalid bytes and surrogates found");
  const unsigned char bin[] = { 0, 0xff, 'x', 'y' };
  for (size_t n = 0; n <= sizeof bin; n++)
    {
      _cleanup_free_ char *e = mcp_base64_encode (bin, n);
      size_t len = 99;
      _cleanup_free_ unsigned char *d = mcp_base64_decode (e, &len);
      CHECK (d != NULL && len == n && memcmp (d, bin, n) == 0,
             "base64 round trip of %zu bytes (%s)", n, e);
    }
  size_t len;
  CHECK (mcp_base64_decode ("A=AA", &len) == NULL
             && mcp_base64_decode ("abc", &len) == NULL,
         "base64: misplaced padding and bad length refused");
  CHECK (mcp_json_depth ("{\"a\":\"[[[[\",\"b\":[[1]]}", 21) == 3,
         "depth ignores brackets in strings");
}

int
main (void)
{
  out = memfd_create ("mcp-out", MFD_CLOEXEC);
  mcp_server_init (&srv, out);
  srv.no_spawn = true;
  srv.runtime = "/nonexistent";
  char *argv[] = { "mcp", NULL };
  const char *rt;
  mcp_policy_parse (1, argv, &srv.policy, &rt, NULL);
  srv.describe = mcp_policy_describe (&srv.policy);
  test_rpc ();
  test_args ();
  test_policy ();
  test_json ();
  mcp_policy_free (&srv.policy);
  mcp_server_free (&srv);
  return unit_finish ();
}
