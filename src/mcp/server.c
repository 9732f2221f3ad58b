/* The JSON-RPC 2.0 side of `sandrun mcp`: one message per line on stdin,
 * responses on stdout.  Whatever arrives gets a JSON-RPC error or a result,
 * never a crash; executions run as child processes (job.c) while the loop
 * keeps answering, so pings and cancellations are served during a run. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp.h"
#include "sandrun/jsongen.h"
#include "sandrun/util.h"

#define MAX_DEPTH 64

enum
{
  PARSE_ERROR = -32700,
  INVALID_REQUEST = -32600,
  METHOD_NOT_FOUND = -32601,
  INVALID_PARAMS = -32602,
};

/* Newest first; the first is what a client asking for another gets. */
static const char *const versions[]
    = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07" };

void
mcp_server_init (struct mcp_server *s, int out_fd)
{
  *s = (struct mcp_server){ .out_fd = out_fd, .structured = true };
  s->sessions = xcalloc (1, sizeof (char *));
}

void
mcp_server_free (struct mcp_server *s)
{
  while (s->jobs != NULL)
    {
      struct mcp_job *j = s->jobs;
      s->jobs = j->next;
      mcp_job_free (j);
    }
  strv_free (s->sessions);
  free (s->protocol);
  free (s->describe);
}

void
mcp_send (struct mcp_server *s, yajl_gen g)
{
  _cleanup_free_ char *text = sr_json_gen_take (g, true);
  if (s->out_fd >= 0 && sr_write_all (s->out_fd, text, strlen (text)) < 0)
    s->out_fd = -1; /* the client is gone; the loop sees EOF next */
}

/* Open a response: {"jsonrpc":"2.0","id":ID, */
static yajl_gen
response (const char *id, bool id_is_str)
{
  yajl_gen g = sr_json_gen_new (false);
  yajl_gen_map_open (g);
  sr_json_gen_str (g, "jsonrpc");
  sr_json_gen_str (g, "2.0");
  sr_json_gen_str (g, "id");
  if (id == NULL)
    yajl_gen_null (g);
  else if (id_is_str)
    sr_json_gen_str (g, id);
  else
    yajl_gen_number (g, id, strlen (id));
  return g;
}

void
mcp_send_error (struct mcp_server *s, const char *id, bool id_is_str, int code,
                const char *msg)
{
  yajl_gen g = response (id, id_is_str);
  sr_json_gen_str (g, "error");
  yajl_gen_map_open (g);
  sr_json_gen_str (g, "code");
  yajl_gen_integer (g, code);
  sr_json_gen_str (g, "message");
  sr_json_gen_str (g, msg);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  mcp_send (s, g);
}

void
mcp_send_result (struct mcp_server *s, struct mcp_job *j)
{
  yajl_gen g = response (j->req_id, j->req_id_is_str);
  sr_json_gen_str (g, "result");
  mcp_result_emit (s, j, g);
  yajl_gen_map_close (g);
  mcp_send (s, g);
}

void
mcp_session_add (struct mcp_server *s, const char *name)
{
  strv_append (&s->sessions, name);
}

bool
mcp_session_known (struct mcp_server *s, const char *name)
{
  for (size_t i = 0; s->sessions[i] != NULL; i++)
    if (strcmp (s->sessions[i], name) == 0)
      return true;
  return false;
}

void
mcp_session_remove (struct mcp_server *s, const char *name)
{
  size_t n = strv_len (s->sessions);
  for (size_t i = 0; i < n; i++)
    if (strcmp (s->sessions[i], name) == 0)
      {
        free (s->sessions[i]);
        memmove (&s->sessions[i], &s->sessions[i + 1],
                 (n - i) * sizeof (char *));
        return;
      }
}

static void
initialize (struct mcp_server *s, yajl_val params, yajl_gen g)
{
  const char *asked = mcp_json_str (params, "protocolVersion");
  const char *v = versions[0];
  for (size_t i = 0; asked != NULL && i < ARRAY_SIZE (versions); i++)
    if (strcmp (asked, versions[i]) == 0)
      v = versions[i];
  free (s->protocol);
  s->protocol = xstrdup (v);
  s->structured = strcmp (v, "2025-06-18") >= 0; /* outputSchema came then */
  sr_json_gen_str (g, "protocolVersion");
  sr_json_gen_str (g, v);
  sr_json_gen_str (g, "capabilities");
  yajl_gen_map_open (g);
  sr_json_gen_str (g, "tools");
  yajl_gen_map_open (g);
  sr_json_gen_str (g, "listChanged");
  yajl_gen_bool (g, 0);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  sr_json_gen_str (g, "serverInfo");
  yajl_gen_map_open (g);
  sr_json_gen_str (g, "name");
  sr_json_gen_str (g, "sandrun");
  sr_json_gen_str (g, "version");
  sr_json_gen_str (g, PACKAGE_VERSION);
  yajl_gen_map_close (g);
  sr_json_gen_str (g, "instructions");
  _cleanup_free_ char *ins
      = xasprintf ("Every run_code call runs in a fresh, isolated sandrun "
                   "sandbox unless a session "
                   "(session_start) is given. %s",
                   s->describe);
  sr_json_gen_str (g, ins);
}

/* tools/call: a job, or an error now. */
static void
call_tool (struct mcp_server *s, const char *id, bool id_is_str,
           yajl_val params)
{
  const char *name = mcp_json_str (params, "name");
  yajl_val args = mcp_json_get (params, "arguments");
  _cleanup_error_ sr_error *err = NULL;
  _cleanup_strv_ char **argv = NULL;
  int tool = mcp_tool_find (name);

  if (name == NULL)
    return mcp_send_error (s, id, id_is_str, INVALID_PARAMS,
                           "tools/call: missing \"name\"");
  if (tool < 0)
    {
      _cleanup_free_ char *m
          = xasprintf ("tools/call: unknown tool \"%s\"", name);
      return mcp_send_error (s, id, id_is_str, INVALID_PARAMS, m);
    }
  struct mcp_job *j = xcalloc (1, sizeof *j);
  *j = (struct mcp_job){ .tool = tool,
                         .pidfd = -1,
                         .out_fd = -1,
                         .err_fd = -1,
                         .req_id = xstrdup (id),
                         .req_id_is_str = id_is_str };
  j->out.max = 64 * 1024 * 1024;
  j->err.max = 64 * 1024;
  int r = mcp_tool_prepare (s, tool, args, j, &argv, &err);
  if (r == 0 && s->n_jobs >= MCP_MAX_JOBS)
    r = (sr_fail (&err, 0,
                  "%d executions are running already: wait for one to end",
                  MCP_MAX_JOBS),
         -2);
  if (r == 0 && s->no_spawn)
    r = (sr_fail (&err, 0, "this server runs no executions"), -2);
  if (r == 0 && mcp_job_spawn (j, s->runtime, argv, &err) < 0)
    r = -2;
  if (r == -1)
    mcp_send_error (s, id, id_is_str, INVALID_PARAMS, err->msg);
  if (r < 0)
    {
      if (r == -2)
        {
          j->status = 125;
          j->err.data = xstrdup (err->msg);
          mcp_send_result (s, j);
        }
      mcp_job_free (j);
      return;
    }
  j->next = s->jobs;
  s->jobs = j;
  s->n_jobs++;
}

static void
cancel (struct mcp_server *s, yajl_val params)
{
  yajl_val id = mcp_json_get (params, "requestId");
  const char *text = YAJL_IS_STRING (id)   ? id->u.string
                     : YAJL_IS_NUMBER (id) ? id->u.number.r
                                           : NULL;
  for (struct mcp_job *j = s->jobs; text != NULL && j != NULL; j = j->next)
    if (j->req_id_is_str == YAJL_IS_STRING (id)
        && strcmp (j->req_id, text) == 0)
      {
        j->cancelled = true;
        mcp_job_kill (j, SIGTERM);
      }
}

static void
request (struct mcp_server *s, const char *method, const char *id,
         bool id_is_str, yajl_val params)
{
  if (params != NULL && !YAJL_IS_OBJECT (params) && !YAJL_IS_ARRAY (params))
    return mcp_send_error (s, id, id_is_str, INVALID_REQUEST,
                           "\"params\" must be an object");
  if (strcmp (method, "tools/call") == 0)
    {
      if (!YAJL_IS_OBJECT (params))
        return mcp_send_error (s, id, id_is_str, INVALID_PARAMS,
                               "tools/call: \"params\" must be an object");
      return call_tool (s, id, id_is_str, params);
    }
  yajl_gen g = response (id, id_is_str);
  sr_json_gen_str (g, "result");
  yajl_gen_map_open (g);
  if (strcmp (method, "initialize") == 0)
    initialize (s, params, g);
  else if (strcmp (method, "tools/list") == 0)
    mcp_tools_list (s, g);
  else if (strcmp (method, "ping") != 0)
    {
      yajl_gen_free (g);
      _cleanup_free_ char *m = xasprintf ("unknown method \"%s\"", method);
      return mcp_send_error (s, id, id_is_str, METHOD_NOT_FOUND, m);
    }
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  mcp_send (s, g);
}

static void
message (struct mcp_server *s, yajl_val m)
{
  if (YAJL_IS_ARRAY (m))
    return mcp_send_error (s, NULL, false, INVALID_REQUEST,
                           "batches are not supported");
  if (!YAJL_IS_OBJECT (m) || !str_eq (mcp_json_str (m, "jsonrpc"), "2.0"))
    return mcp_send_error (s, NULL, false, INVALID_REQUEST,
                           "expected a JSON-RPC 2.0 object");
  yajl_val id = mcp_json_get (m, "id");
  const char *method = mcp_json_str (m, "method");
  bool has_id = id != NULL;
  if (has_id && !YAJL_IS_STRING (id) && !YAJL_IS_INTEGER (id))
    return mcp_send_error (s, NULL, false, INVALID_REQUEST,
                           "\"id\" must be a string or an integer");
  if (method == NULL)
    {
      /* a response to us (we send no requests) is ignored */
      if (mcp_json_get (m, "method") != NULL
          || (mcp_json_get (m, "result") == NULL
              && mcp_json_get (m, "error") == NULL))
        mcp_send_error (s, NULL, false, INVALID_REQUEST,
                        "\"method\" must be a string");
      return;
    }
  yajl_val params = mcp_json_get (m, "params");
  if (!has_id)
    {
      if (strcmp (method, "notifications/cancelled") == 0)
        cancel (s, params);
      return; /* other notifications need nothing from us */
    }
  request (s, method, YAJL_IS_STRING (id) ? id->u.string : id->u.number.r,
           YAJL_IS_STRING (id), params);
}

void
mcp_handle_line (struct mcp_server *s, const char *line, size_t len)
{
  while (len > 0
         && (line[len - 1] == '\r' || line[len - 1] == ' '
             || line[len - 1] == '\t'))
    len--;
  size_t i = strspn (line, " \t\r");
  if (i >= len)
    return;
  if (memchr (line, '\0', len) != NULL)
    return mcp_send_error (s, NULL, false, PARSE_ERROR,
                           "a NUL byte in the message");
  if (mcp_json_depth (line, len) > MAX_DEPTH)
    return mcp_send_error (s, NULL, false, PARSE_ERROR,
                           "the message is nested too deeply");
  _cleanup_free_ char *text = xstrndup (line, len);
  char why[256] = "";
  yajl_val m = yajl_tree_parse (text, why, sizeof why);
  if (m == NULL)
    {
      why[strcspn (why, "\n")] = '\0';
      _cleanup_free_ char *msg
          = xasprintf ("parse error: %s", *why ? why : "invalid JSON");
      return mcp_send_error (s, NULL, false, PARSE_ERROR, msg);
    }
  message (s, m);
  yajl_tree_free (m);
}
