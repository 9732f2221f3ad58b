/* The MCP tools: their manifest (descriptions carry the configured
 * constraints), the checks of a call's arguments, and the sandrun command
 * line each call becomes.  Nothing a client sends widens the policy: the
 * server's options come first and the timeout is capped. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp.h"
#include "sandrun/jsongen.h"
#include "sandrun/util.h"

#define MAX_CODE (100 * 1000)      /* one argv string stays under 128 KiB */
#define MAX_FILE (8 * 1024 * 1024) /* a file written in a call */

enum arg_type
{
  A_STR,
  A_NUM,
  A_FILES,
  A_ENUM
};

struct arg
{
  const char *name;
  enum arg_type type;
  bool required;
  const char *choices[3];
};

struct tool
{
  const char *name, *what, *input_schema;
  struct arg args[6];
};

#define S_SESSION                                                             \
  "\"session\":{\"type\":\"string\",\"description\":\"a session id from "     \
  "session_start\"}"
#define S_TIMEOUT                                                             \
  "\"timeout\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":"  \
  "\"seconds; capped by the server's limit\"}"
#define S_PATH                                                                \
  "\"path\":{\"type\":\"string\",\"description\":\"a path under /work "       \
  "(relative paths are taken from /work) or /tmp\"}"
#define OBJ(props, req)                                                       \
  "{\"type\":\"object\",\"properties\":{" props "},\"required\":[" req        \
  "],\"additionalProperties\":false}"

static const struct tool tools[MCP_N_TOOLS] = {
  [MCP_RUN_CODE]
  = { "run_code",
      "Run code in a fresh, isolated sandbox and return its execution receipt "
      "(exit status, the limit that stopped it if any, stdout, stderr, the "
      "files written under /work). Nothing persists between calls unless a "
      "session is given.",
      OBJ (
          "\"language\":{\"type\":\"string\",\"enum\":[\"python\",\"shell\"]},"
          "\"code\":{\"type\":\"string\",\"description\":\"the program "
          "(python3) or script (sh)\"},"
          "\"files\":{\"type\":\"object\",\"additionalProperties\":{\"type\":"
          "\"string\"},"
          "\"description\":\"files to place in /work before the run: relative "
          "path -> UTF-8 content\"}," S_TIMEOUT "," S_SESSION,
          "\"language\",\"code\""),
      { { "language", A_ENUM, true, { "python", "shell" } },
        { "code", A_STR, true, { 0 } },
        { "files", A_FILES, false, { 0 } },
        { "timeout", A_NUM, false, { 0 } },
        { "session", A_STR, false, { 0 } } } },
  [MCP_SESSION_START] = { "session_start",
                          "Start a persistent sandbox session: /work, /tmp, "
                          "processes and (with python3) "
                          "one Python interpreter's variables live across "
                          "session_exec and run_code calls "
                          "until session_stop. Returns the session id.",
                          OBJ ("", ""),
                          { { 0 } } },
  [MCP_SESSION_EXEC]
  = { "session_exec",
      "Run a shell command (sh -c) in a session; returns its execution "
      "receipt.",
      OBJ (S_SESSION ",\"command\":{\"type\":\"string\"}," S_TIMEOUT,
           "\"session\",\"command\""),
      { { "session", A_STR, true, { 0 } },
        { "command", A_STR, true, { 0 } },
        { "timeout", A_NUM, false, { 0 } } } },
  [MCP_SESSION_READ_FILE]
  = { "session_read_file",
      "Read a file of a session (UTF-8 text, or base64 when it is binary).",
      OBJ (S_SESSION "," S_PATH, "\"session\",\"path\""),
      { { "session", A_STR, true, { 0 } }, { "path", A_STR, true, { 0 } } } },
  [MCP_SESSION_WRITE_FILE]
  = { "session_write_file",
      "Write a file into a session (created or replaced).",
      OBJ (
          S_SESSION
          "," S_PATH ",\"content\":{\"type\":\"string\"},"
          "\"encoding\":{\"type\":\"string\",\"enum\":[\"utf-8\",\"base64\"]}",
          "\"session\",\"path\",\"content\""),
      { { "session", A_STR, true, { 0 } },
        { "path", A_STR, true, { 0 } },
        { "content", A_STR, true, { 0 } },
        { "encoding", A_ENUM, false, { "utf-8", "base64" } } } },
  [MCP_SESSION_STOP] = { "session_stop",
                         "Stop a session and destroy everything in it.",
                         OBJ (S_SESSION, "\"session\""),
                         { { "session", A_STR, true, { 0 } } } },
};

int
mcp_tool_find (const char *name)
{
  for (int i = 0; i < MCP_N_TOOLS; i++)
    if (name != NULL && strcmp (tools[i].name, name) == 0)
      return i;
  return -1;
}

static void
emit_schema (yajl_gen g, const char *text)
{
  yajl_val v = yajl_tree_parse (text, NULL, 0);
  if (v == NULL)
    abort (); /* the tables above are constant */
  sr_json_gen_value (g, v);
  yajl_tree_free (v);
}

void
mcp_tools_list (struct mcp_server *s, yajl_gen g)
{
  sr_json_gen_str (g, "tools");
  yajl_gen_array_open (g);
  for (int i = 0; i < MCP_N_TOOLS; i++)
    {
      /* the constraints where code runs: the file tools need none */
      bool runs = i == MCP_RUN_CODE || i == MCP_SESSION_START
                  || i == MCP_SESSION_EXEC;
      _cleanup_free_ char *d = xasprintf (
          "%s%s%s", tools[i].what, runs ? " " : "", runs ? s->describe : "");
      yajl_gen_map_open (g);
      sr_json_gen_str (g, "name");
      sr_json_gen_str (g, tools[i].name);
      sr_json_gen_str (g, "description");
      sr_json_gen_str (g, d);
      sr_json_gen_str (g, "inputSchema");
      emit_schema (g, tools[i].input_schema);
      if (s->structured)
        {
          sr_json_gen_str (g, "outputSchema");
          emit_schema (g, mcp_output_schema (i));
        }
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

static int
check_arg (const struct arg *a, yajl_val v, sr_error **err)
{
  switch (a->type)
    {
    case A_STR:
      if (!YAJL_IS_STRING (v))
        return sr_fail (err, 0, "\"%s\" must be a string", a->name);
      return 0;
    case A_NUM:
      if (!YAJL_IS_NUMBER (v) || !(v->u.number.d > 0))
        return sr_fail (err, 0, "\"%s\" must be a positive number", a->name);
      return 0;
    case A_ENUM:
      for (size_t i = 0; YAJL_IS_STRING (v) && a->choices[i] != NULL; i++)
        if (strcmp (v->u.string, a->choices[i]) == 0)
          return 0;
      return sr_fail (err, 0, "\"%s\" must be one of %s, %s", a->name,
                      a->choices[0], a->choices[1]);
    case A_FILES:
      if (!YAJL_IS_OBJECT (v))
        return sr_fail (err, 0,
                        "\"files\" must be an object: path -> content");
      for (size_t i = 0; i < v->u.object.len; i++)
        if (!YAJL_IS_STRING (v->u.object.values[i]))
          return sr_fail (err, 0,
                          "\"files\": the content of \"%s\" must be a string",
                          v->u.object.keys[i]);
      return 0;
    }
  return 0;
}

static int
check_args (const struct tool *t, yajl_val args, sr_error **err)
{
  if (args != NULL && !YAJL_IS_OBJECT (args))
    return sr_fail (err, 0, "%s: arguments must be an object", t->name);
  for (size_t i = 0; args != NULL && i < args->u.object.len; i++)
    {
      const struct arg *a = t->args;
      while (a->name != NULL && strcmp (a->name, args->u.object.keys[i]) != 0)
        a++;
      if (a->name == NULL)
        return sr_fail (err, 0, "%s: unknown argument \"%s\"", t->name,
                        args->u.object.keys[i]);
      if (check_arg (a, args->u.object.values[i], err) < 0)
        return sr_wrap (err, "%s", t->name);
    }
  for (const struct arg *a = t->args; a->name != NULL; a++)
    if (a->required && mcp_json_get (args, a->name) == NULL)
      return sr_fail (err, 0, "%s: missing argument \"%s\"", t->name, a->name);
  return 0;
}

/* A relative path of plain components: no "..", no "." , no empty part. */
static bool
plain_relative (const char *p)
{
  if (*p == '\0' || *p == '/' || strlen (p) > 1024)
    return false;
  for (const char *c = p; *c != '\0';)
    {
      size_t n = strcspn (c, "/");
      if (n == 0 || (n == 1 && c[0] == '.')
          || (n == 2 && c[0] == '.' && c[1] == '.'))
        return false;
      c += n;
      if (*c == '/')
        c++;
      if (*c == '\0' && c[-1] == '/')
        return false;
    }
  return true;
}

/* A session path: under /work or /tmp, relative ones from /work. */
static char *
session_path (const char *p, sr_error **err)
{
  if (plain_relative (p))
    return xasprintf ("/work/%s", p);
  if ((str_has_prefix (p, "/work/") && plain_relative (p + 6))
      || (str_has_prefix (p, "/tmp/") && plain_relative (p + 5)))
    return xstrdup (p);
  return sr_fail (err, 0,
                  "\"path\" \"%s\": expected a path under /work or /tmp, "
                  "without \"..\"",
                  p),
         NULL;
}

static char *
timeout_arg (struct mcp_server *s, yajl_val args)
{
  yajl_val t = mcp_json_get (args, "timeout");
  long ms = s->policy.timeout_ms;
  if (t != NULL && t->u.number.d * 1000 < ms)
    ms = (long) (t->u.number.d * 1000);
  return mcp_format_ms (ms > 0 ? ms : 1);
}

static char **
base_argv (struct mcp_server *s, const char *sub)
{
  char **v = xcalloc (1, sizeof (char *));
  /* execv runs s->runtime; argv[0] is how this sandrun was run, so that
   * the child finds what lies beside it (sandrun-egress in a build tree) */
  strv_append (&v, str_eq (s->runtime, "/proc/self/exe")
                       ? program_invocation_name
                       : s->runtime);
  if (s->root != NULL)
    {
      strv_append (&v, "--root");
      strv_append (&v, s->root);
    }
  strv_append (&v, "sandbox");
  if (sub != NULL)
    strv_append (&v, sub);
  return v;
}

static void
append_strv (char ***v, char **more)
{
  for (size_t i = 0; more[i] != NULL; i++)
    strv_append (v, more[i]);
}

/* Append each string up to a NULL. */
static void __attribute__ ((sentinel)) add (char ***v, ...)
{
  va_list ap;
  va_start (ap, v);
  for (const char *a = va_arg (ap, const char *); a != NULL;
       a = va_arg (ap, const char *))
    strv_append (v, a);
  va_end (ap);
}

/* `sandbox exec S --timeout T --receipt -`, the rest to add. */
static char **
exec_argv (struct mcp_server *s, const char *session, const char *timeout)
{
  char **v = base_argv (s, "exec");
  add (&v, session, "--timeout", timeout, "--receipt", "-", NULL);
  return v;
}

/* The private directory of a call, for files on their way in or out. */
static int
make_tmpdir (struct mcp_job *j, sr_error **err)
{
  const char *base = getenv ("TMPDIR");
  j->tmpdir = xasprintf ("%s/sandrun-mcp-XXXXXX",
                         base != NULL && *base ? base : "/tmp");
  if (mkdtemp (j->tmpdir) == NULL)
    {
      int e = errno;
      free (j->tmpdir);
      j->tmpdir = NULL;
      return sr_fail (err, e, "create a temporary directory");
    }
  return 0;
}

/* Write `len` bytes at dir/rel, making the parent directories. */
static int
put_file (const char *dir, const char *rel, const void *buf, size_t len,
          sr_error **err)
{
  _cleanup_free_ char *path = xasprintf ("%s/%s", dir, rel);
  for (char *sl = strchr (path + strlen (dir) + 1, '/'); sl != NULL;
       sl = strchr (sl + 1, '/'))
    {
      *sl = '\0';
      if (mkdir (path, 0755) < 0 && errno != EEXIST)
        return sr_fail (err, errno, "create \"%s\"", rel);
      *sl = '/';
    }
  _cleanup_close_ int fd = open (
      path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 || sr_write_all (fd, buf, len) < 0)
    return sr_fail (err, errno, "write \"%s\"", rel);
  return 0;
}

/* The sandbox writes to a --workdir as the directory's owner and refuses
 * one of root's (its files would be root's on the host): a server running
 * as root hands its private working directory to nobody. */
#define WORK_OWNER 65534

static int
give_to_owner (const char *path, const struct stat *st, int flag,
               struct FTW *ftw)
{
  (void) st, (void) flag, (void) ftw;
  return lchown (path, WORK_OWNER, WORK_OWNER) < 0 ? -1 : 0;
}

static int
prepare_files (struct mcp_job *j, yajl_val files, sr_error **err)
{
  size_t total = 0;
  if (make_tmpdir (j, err) < 0)
    return -2;
  _cleanup_free_ char *work = xasprintf ("%s/work", j->tmpdir);
  if (mkdir (work, 0755) < 0)
    return sr_fail (err, errno, "create a working directory"), -2;
  for (size_t i = 0; i < files->u.object.len; i++)
    {
      const char *rel = files->u.object.keys[i],
                 *body = files->u.object.values[i]->u.string;
      if (!plain_relative (rel))
        return sr_fail (
            err, 0, "\"files\": \"%s\" is not a relative path without \"..\"",
            rel);
      total += strlen (body);
      if (total > MAX_FILE)
        return sr_fail (err, 0, "\"files\": more than %d bytes", MAX_FILE);
      if (put_file (work, rel, body, strlen (body), err) < 0)
        return sr_wrap (err, "\"files\""), errno == EEXIST ? -1 : -2;
    }
  if (geteuid () == 0 && nftw (work, give_to_owner, 16, FTW_PHYS) != 0)
    return sr_fail (err, errno, "hand the working directory to nobody"), -2;
  return 0;
}

static int
prepare_run (struct mcp_server *s, yajl_val args, struct mcp_job *j,
             char ***argv, sr_error **err)
{
  const char *lang = mcp_json_str (args, "language");
  const char *code = mcp_json_str (args, "code");
  const char *session = mcp_json_str (args, "session");
  yajl_val files = mcp_json_get (args, "files");
  bool python = strcmp (lang, "python") == 0;
  const char *interp = python ? "python3" : "sh";
  _cleanup_free_ char *timeout = timeout_arg (s, args);

  if (strlen (code) > MAX_CODE)
    return sr_fail (err, 0, "run_code: \"code\" is longer than %d bytes",
                    MAX_CODE);
  if (python ? !s->policy.has_python : !s->policy.has_shell)
    return sr_fail (err, 0, "run_code: this sandbox has no %s", interp);
  if (session != NULL && files != NULL)
    return sr_fail (err, 0,
                    "run_code: \"files\" with a session: use "
                    "session_write_file");
  if (session != NULL)
    {
      /* python runs in the session's interpreter, its state kept */
      *argv = exec_argv (s, session, timeout);
      if (python)
        add (argv, "--code", code, NULL);
      else
        add (argv, "--", "sh", "-c", code, NULL);
      return 0;
    }
  int r = files != NULL ? prepare_files (j, files, err) : 0;
  if (r < 0)
    return r;
  *argv = base_argv (s, NULL);
  append_strv (argv, s->policy.sandbox_opts);
  add (argv, "--timeout", timeout, "--receipt", "-", NULL);
  if (j->tmpdir != NULL)
    {
      _cleanup_free_ char *work = xasprintf ("%s/work", j->tmpdir);
      add (argv, "--workdir", work, NULL);
    }
  add (argv, "--", interp, "-c", code, NULL);
  return 0;
}

/* session_read_file, session_write_file: a copy through a private
 * directory, with `sandbox cp`. */
static int
prepare_copy (struct mcp_server *s, int tool, yajl_val args, struct mcp_job *j,
              char ***argv, sr_error **err)
{
  const char *session = mcp_json_str (args, "session");
  const char *content = mcp_json_str (args, "content");
  const char *enc = mcp_json_str (args, "encoding");
  _cleanup_free_ unsigned char *bytes = NULL;
  size_t len = content != NULL ? strlen (content) : 0;

  if ((j->path = session_path (mcp_json_str (args, "path"), err)) == NULL)
    return -1;
  if (content != NULL && str_eq (enc, "base64")
      && (bytes = mcp_base64_decode (content, &len)) == NULL)
    return sr_fail (err, 0, "session_write_file: \"content\" is not base64");
  if (len > MAX_FILE)
    return sr_fail (err, 0,
                    "session_write_file: \"content\" is larger "
                    "than %d bytes",
                    MAX_FILE);
  if (make_tmpdir (j, err) < 0)
    return -2;
  j->host_file = xasprintf ("%s/file", j->tmpdir);
  *argv = base_argv (s, "cp");
  if (tool == MCP_SESSION_READ_FILE)
    {
      _cleanup_free_ char *from = xasprintf ("%s:%s", session, j->path);
      add (argv, from, j->host_file, NULL);
      return 0;
    }
  const void *body = bytes != NULL ? (const void *) bytes : content;
  if (put_file (j->tmpdir, "file", body, len, err) < 0)
    return -2;
  add (argv, session, j->host_file, j->path, NULL);
  return 0;
}

static int
prepare_session (struct mcp_server *s, int tool, yajl_val args,
                 struct mcp_job *j, char ***argv, sr_error **err)
{
  const char *session = mcp_json_str (args, "session");
  _cleanup_free_ char *timeout = timeout_arg (s, args);

  switch (tool)
    {
    case MCP_SESSION_START:
      j->session
          = xasprintf ("mcp-%ld-%lu", (long) getpid (), ++s->next_session);
      *argv = base_argv (s, "start");
      add (argv, "--name", j->session, NULL);
      append_strv (argv, s->policy.sandbox_opts);
      append_strv (argv, s->policy.session_opts);
      if (s->policy.has_python)
        add (argv, "--kernel", "python", NULL);
      return 0;
    case MCP_SESSION_EXEC:
      *argv = exec_argv (s, session, timeout);
      add (argv, "--", "sh", "-c", mcp_json_str (args, "command"), NULL);
      return 0;
    case MCP_SESSION_STOP:
      *argv = base_argv (s, "stop");
      add (argv, session, NULL);
      return 0;
    default:
      return prepare_copy (s, tool, args, j, argv, err);
    }
}

int
mcp_tool_prepare (struct mcp_server *s, int tool, yajl_val args,
                  struct mcp_job *j, char ***argv, sr_error **err)
{
  const char *session = mcp_json_str (args, "session");

  if (check_args (&tools[tool], args, err) < 0)
    return -1;
  if (session != NULL && !mcp_session_known (s, session))
    return sr_fail (err, 0,
                    "%s: no session \"%s\" (start one with session_start)",
                    tools[tool].name, session);
  if (session != NULL)
    j->session = xstrdup (session);
  if (tool == MCP_RUN_CODE)
    return prepare_run (s, args, j, argv, err);
  return prepare_session (s, tool, args, j, argv, err);
}
