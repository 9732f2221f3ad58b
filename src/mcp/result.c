/* A finished execution as a tools/call result: the receipt as
 * structuredContent and a short summary a model reads well; or, when
 * sandrun itself could not run the call, a tool error carrying its
 * message. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "mcp.h"
#include "sandrun/jsongen.h"
#include "sandrun/util.h"

#define SUMMARY_STREAM 4000 /* bytes of each stream in the summary */
#define MAX_READ (8 * 1024 * 1024)

/* The receipt (issue 12), by the names and types of the sandbox's schema,
 * contrib/sandbox/receipt.schema.json, which is authoritative; looser
 * (fewer required fields, no formats or patterns) so that a receipt of a
 * newer sandrun still validates in a client.  mcp.bats checks that the two
 * agree. */
#define T(t) "{\"type\":\"" t "\"}"
#define NULLABLE(t) "{\"type\":[\"" t "\",\"null\"]}"
static const char receipt_schema[] = "{\"type\":\"object\",\"properties\":{"
                                     "\"receipt_version\":" T (
                                         "string") ",\"id\":" T ("string") ","
                                                                           "\""
                                                                           "se"
                                                                           "ss"
                                                                           "io"
                                                                           "n"
                                                                           "\""
                                                                           ":" NULLABLE ("string") ","
                                                                                                   "\"command\":{\"type\":\"array\",\"items\":" T ("string") "},"
                                                                                                                                                             "\"started_at\":" T ("string") ",\"finished_at\":" T ("string") ","
                                                                                                                                                                                                                             "\"duration_ms\":" T ("integer") ",\"cpu_ms\":" T ("object") ","
                                                                                                                                                                                                                                                                                          "\"peak_memory_bytes\":" T (
                                                                                                                                                                                                                                                                                              "integer") ",\"pids_peak\":" T ("integer") ","
                                                                                                                                                                                                                                                                                                                                         "\"exit_code\":" NULLABLE (
                                                                                                                                                                                                                                                                                                                                             "integer") ",\"signal\":" NULLABLE ("string") ","
                                                                                                                                                                                                                                                                                                                                                                                           "\"interrupted\":" T ("boolean") ","
                                                                                                                                                                                                                                                                                                                                                                                                                            "\"limit_exceeded\":" NULLABLE (
                                                                                                                                                                                                                                                                                                                                                                                                                                "string") ","
                                                                                                                                                                                                                                                                                                                                                                                                                                          "\"limits_hit\":{\"type\":\"array\",\"items\":" T ("string") "},"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                       "\"message\":" NULLABLE (
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                           "string") ","
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                     "\"stdout\":" T (
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                         "string") ",\"stderr\":" T ("string") ","
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                               "\"stdout_truncated\":" T (
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                   "boolean") ",\"stderr_truncated\":" T ("boolean") ","
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                     "\"files\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                     "\"path\":" T ("string") ",\"change\":" T (
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                         "string") ","
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                   "\"size\":" NULLABLE ("integer") ",\"sha256\":" NULLABLE ("string") "}}},"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                       "\"files_incomplete\":" T ("boolean") ","
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                             "\"policy\":" T ("object") ",\"network\":" T ("array") ",\"sandrun\":" T ("string") "},"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                 "\"required\":[\"exit_code\",\"limit_exceeded\",\"stdout\",\"stderr\",\"files\"]}";

static const char *const schemas[MCP_N_TOOLS] = {
  [MCP_RUN_CODE] = receipt_schema,
  [MCP_SESSION_EXEC] = receipt_schema,
  [MCP_SESSION_START]
  = "{\"type\":\"object\",\"properties\":{\"session\":{\"type\":\"string\"}},"
    "\"required\":[\"session\"]}",
  [MCP_SESSION_STOP]
  = "{\"type\":\"object\",\"properties\":{\"session\":{\"type\":\"string\"},"
    "\"stopped\":{\"type\":\"boolean\"}},\"required\":[\"session\","
    "\"stopped\"]}",
  [MCP_SESSION_WRITE_FILE]
  = "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
    "\"size\":{\"type\":\"integer\"}},\"required\":[\"path\",\"size\"]}",
  [MCP_SESSION_READ_FILE]
  = "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
    "\"size\":{\"type\":\"integer\"},\"encoding\":{\"type\":\"string\","
    "\"enum\":[\"utf-8\",\"base64\"]},\"content\":{\"type\":\"string\"}},"
    "\"required\":[\"path\",\"size\",\"encoding\",\"content\"]}",
};

const char *
mcp_output_schema (int tool)
{
  return schemas[tool];
}

struct text
{
  char *s;
};

static void __attribute__ ((format (printf, 2, 3)))
say (struct text *t, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  _cleanup_free_ char *more = xvasprintf (fmt, ap);
  va_end (ap);
  char *n = xasprintf ("%s%s", t->s != NULL ? t->s : "", more);
  free (t->s);
  t->s = n;
}

static long long
num (yajl_val r, const char *key, long long dflt)
{
  yajl_val v = mcp_json_get (r, key);
  return YAJL_IS_INTEGER (v) ? YAJL_GET_INTEGER (v) : dflt;
}

static void
say_stream (struct text *t, yajl_val r, const char *name)
{
  const char *s = mcp_json_str (r, name);
  _cleanup_free_ char *trunc_key = xasprintf ("%s_truncated", name);
  if (s == NULL || *s == '\0')
    return;
  size_t len = strlen (s), keep = sr_utf8_prefix (s, len, SUMMARY_STREAM);
  say (t, "\n%s:\n%.*s%s", name, (int) keep, s,
       len > 0 && s[keep - 1] == '\n' ? "" : "\n");
  if (keep < len)
    say (t, "[... %zu more bytes in structuredContent.%s]\n", len - keep,
         name);
  if (YAJL_IS_TRUE (mcp_json_get (r, trunc_key)))
    say (t, "[%s was cut at the output limit]\n", name);
}

static char *
summary (yajl_val r)
{
  struct text t = { NULL };
  yajl_val code = mcp_json_get (r, "exit_code"),
           sig = mcp_json_get (r, "signal");
  const char *limit = mcp_json_str (r, "limit_exceeded"),
             *msg = mcp_json_str (r, "message");

  if (YAJL_IS_INTEGER (code))
    say (&t, "%s (exit code %lld)",
         YAJL_GET_INTEGER (code) == 0 ? "Succeeded" : "Failed",
         YAJL_GET_INTEGER (code));
  else if (YAJL_IS_STRING (sig))
    say (&t, "Killed by %s", sig->u.string);
  else
    say (&t, "Killed by signal %lld", num (r, "signal", 0));
  say (&t, " in %lld ms.", num (r, "duration_ms", 0));
  if (limit != NULL)
    say (&t, " Limit exceeded: %s.", limit);
  /* the receipt's sentence, where it says more than the status */
  if (msg != NULL && *msg != '\0'
      && (limit != NULL || !YAJL_IS_INTEGER (code)))
    say (&t, " (%s)", msg);
  say (&t, "\n");
  say_stream (&t, r, "stdout");
  say_stream (&t, r, "stderr");
  yajl_val files = mcp_json_get (r, "files");
  for (size_t i = 0; YAJL_IS_ARRAY (files) && i < files->u.array.len; i++)
    {
      yajl_val f = files->u.array.values[i];
      say (&t, "%s%s (%s, %lld bytes)", i == 0 ? "\nfiles: " : ", ",
           mcp_json_str (f, "path") ?: "?",
           mcp_json_str (f, "change") ?: "changed", num (f, "size", 0));
    }
  if (YAJL_IS_ARRAY (files) && files->u.array.len > 0)
    say (&t, "\n");
  return t.s;
}

static void
emit_text (yajl_gen g, const char *text)
{
  sr_json_gen_str (g, "content");
  yajl_gen_array_open (g);
  yajl_gen_map_open (g);
  sr_json_gen_str (g, "type");
  sr_json_gen_str (g, "text");
  sr_json_gen_str (g, "text");
  sr_json_gen_str (g, text);
  yajl_gen_map_close (g);
  yajl_gen_array_close (g);
}

/* sandrun's own message (its last stderr line), as a tool error. */
static void
emit_failure (yajl_gen g, struct mcp_job *j)
{
  struct text t = { NULL };
  char *e = j->err.data != NULL ? j->err.data : "";
  size_t len = strlen (e);
  while (len > 0 && e[len - 1] == '\n')
    len--;
  size_t keep = sr_utf8_prefix (e, len, 2000);
  if (j->out.overflow)
    say (&t,
         "the receipt was larger than %zu bytes: the execution was stopped",
         j->out.max);
  else if (keep > 0)
    say (&t, "%.*s", (int) keep, e);
  else
    say (&t, "sandrun exited with status %d", j->status);
  emit_text (g, t.s);
  free (t.s);
  sr_json_gen_str (g, "isError");
  yajl_gen_bool (g, 1);
}

static void
emit_structured (struct mcp_server *s, yajl_gen g, const char *text,
                 yajl_val doc)
{
  emit_text (g, text);
  if (s->structured)
    {
      sr_json_gen_str (g, "structuredContent");
      sr_json_gen_value (g, doc);
    }
  sr_json_gen_str (g, "isError");
  yajl_gen_bool (g, 0);
}

static bool
emit_receipt (struct mcp_server *s, struct mcp_job *j, yajl_gen g)
{
  if (j->out.data == NULL || j->out.overflow
      || mcp_json_depth (j->out.data, j->out.len) > 64)
    return false;
  yajl_val r = yajl_tree_parse (j->out.data, NULL, 0);
  if (!YAJL_IS_OBJECT (r))
    return yajl_tree_free (r), false;
  _cleanup_free_ char *text = summary (r);
  emit_structured (s, g, text, r);
  yajl_tree_free (r);
  return true;
}

/* A small document of the session tools, built as text. */
static void
emit_doc (struct mcp_server *s, yajl_gen g, const char *text, yajl_gen doc)
{
  _cleanup_free_ char *json = sr_json_gen_take (doc, false);
  yajl_val v = yajl_tree_parse (json, NULL, 0);
  emit_structured (s, g, text, v);
  yajl_tree_free (v);
}

/* The copy `sandbox cp` made: a regular file, never a link out of the
 * private directory, nor a fifo that would block the server. */
static char *
read_copy (const char *path, size_t *len, const char **why)
{
  struct stat st;
  _cleanup_close_ int fd
      = open (path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) < 0)
    return *why = strerror (errno), NULL;
  if (!S_ISREG (st.st_mode))
    return *why = "not a regular file", NULL;
  if (st.st_size > MAX_READ)
    return *why = "larger than 8 MiB", NULL;
  char *buf = xmalloc ((size_t) st.st_size + 1);
  ssize_t n = sr_read_all (fd, buf, (size_t) st.st_size);
  if (n < 0)
    return free (buf), *why = strerror (errno), NULL;
  buf[n] = '\0';
  *len = (size_t) n;
  return buf;
}

static bool
emit_read (struct mcp_server *s, struct mcp_job *j, yajl_gen g)
{
  size_t len = 0;
  const char *why = NULL;
  _cleanup_free_ char *buf = read_copy (j->host_file, &len, &why);
  if (buf == NULL)
    {
      free (j->err.data);
      j->err = (struct mcp_buf){ 0 };
      j->err.data = xasprintf ("session_read_file %s: %s", j->path, why);
      return false;
    }
  bool text = mcp_utf8_valid (buf, len);
  _cleanup_free_ char *b64
      = text ? NULL : mcp_base64_encode ((unsigned char *) buf, len);
  yajl_gen d = sr_json_gen_new (false);
  yajl_gen_map_open (d);
  sr_json_gen_str (d, "path");
  sr_json_gen_str (d, j->path);
  sr_json_gen_str (d, "size");
  yajl_gen_integer (d, (long long) len);
  sr_json_gen_str (d, "encoding");
  sr_json_gen_str (d, text ? "utf-8" : "base64");
  sr_json_gen_str (d, "content");
  sr_json_gen_str (d, text ? buf : b64);
  yajl_gen_map_close (d);
  emit_doc (s, g, text ? buf : b64, d);
  return true;
}

static void
emit_session (struct mcp_server *s, struct mcp_job *j, yajl_gen g)
{
  yajl_gen d = sr_json_gen_new (false);
  _cleanup_free_ char *text = NULL;
  yajl_gen_map_open (d);
  if (j->tool == MCP_SESSION_WRITE_FILE)
    {
      struct stat st;
      sr_json_gen_str (d, "path");
      sr_json_gen_str (d, j->path);
      sr_json_gen_str (d, "size");
      yajl_gen_integer (d, stat (j->host_file, &st) == 0 ? st.st_size : 0);
      text = xasprintf ("Wrote %s.", j->path);
    }
  else
    {
      bool start = j->tool == MCP_SESSION_START;
      sr_json_gen_str (d, "session");
      sr_json_gen_str (d, j->session);
      if (!start)
        {
          sr_json_gen_str (d, "stopped");
          yajl_gen_bool (d, 1);
        }
      text
          = start ? xasprintf (
                "Session %s started: pass \"session\": \"%s\" to run_code, "
                "session_exec and the file tools; stop it with session_stop.",
                j->session, j->session)
                  : xasprintf ("Session %s stopped; everything in it is gone.",
                               j->session);
      if (start)
        mcp_session_add (s, j->session);
      else
        mcp_session_remove (s, j->session);
    }
  yajl_gen_map_close (d);
  emit_doc (s, g, text, d);
}

void
mcp_result_emit (struct mcp_server *s, struct mcp_job *j, yajl_gen g)
{
  yajl_gen_map_open (g);
  bool receipt = j->tool == MCP_RUN_CODE || j->tool == MCP_SESSION_EXEC;
  if (receipt ? !emit_receipt (s, j, g) : j->status != 0)
    emit_failure (g, j);
  else if (j->tool == MCP_SESSION_READ_FILE)
    {
      if (!emit_read (s, j, g))
        emit_failure (g, j);
    }
  else if (!receipt)
    emit_session (s, j, g);
  yajl_gen_map_close (g);
}
