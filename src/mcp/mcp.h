/* sandrun mcp: a Model Context Protocol server on stdio.  Each execution is
 * a child `sandrun sandbox ...` whose receipt the server reads, so the MCP
 * layer depends only on the sandbox CLI and a crash in an execution cannot
 * take the server down.  Internal to src/mcp/. */
#ifndef SANDRUN_MCP_H
#define SANDRUN_MCP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "sandrun/error.h"
#include "sandrun/jsongen.h"

/* ---- policy.c: the server's options, fixed for every call ---- */
struct mcp_policy
{
  char **sandbox_opts; /* passed to every `sandbox` and `sandbox start` */
  char **session_opts; /* passed to `sandbox start` only */
  long timeout_ms;     /* default and cap of every execution */
  const char *memory, *pids, *output_limit, *disk, *cpus, *rootfs;
  char **allow_hosts;
  bool has_python, has_shell;
};

/* Parse `sandrun mcp`'s options (argv[0] is "mcp"); *runtime is --runtime's
 * value or NULL. */
int mcp_policy_parse (int argc, char **argv, struct mcp_policy *p,
                      const char **runtime, sr_error **err);
void mcp_policy_free (struct mcp_policy *p);
/* The constraints in words, for the tool descriptions (malloc'd). */
char *mcp_policy_describe (const struct mcp_policy *p);
/* "10s" or "1500ms", for the sandbox's --timeout (malloc'd). */
char *mcp_format_ms (long ms);
/* A duration: "10", "10s", "500ms", "2m"; -1 when it is not one. */
long mcp_parse_duration_ms (const char *s);

/* ---- json.c: yajl helpers ---- */
/* Maximum nesting of a JSON text (strings skipped), to refuse deep
 * documents before yajl_tree recurses over them. */
size_t mcp_json_depth (const char *text, size_t len);
/* Object member, or NULL; string member, or NULL. */
yajl_val mcp_json_get (yajl_val obj, const char *key);
const char *mcp_json_str (yajl_val obj, const char *key);
/* (sr_json_gen_value and sr_utf8_prefix are in sandrun/jsongen.h) */
bool mcp_utf8_valid (const char *s, size_t len);
char *mcp_base64_encode (const unsigned char *in, size_t len);
/* NULL when `in` is not base64. */
unsigned char *mcp_base64_decode (const char *in, size_t *len);

/* ---- job.c: one child sandrun, its output and its exit ---- */
struct mcp_buf
{
  char *data;
  size_t len, cap, max;
  bool overflow;
};

struct mcp_job
{
  struct mcp_job *next;
  /* the request: its id (JSON text of a number, or a string) */
  char *req_id;
  bool req_id_is_str;
  int tool;        /* enum mcp_tool */
  char *session;   /* the session the call is about, if any */
  char *tmpdir;    /* removed when the job ends */
  char *host_file; /* read_file: where the copy lands */
  char *path;      /* read/write_file: the path in the session */
  pid_t pid;
  int pidfd, out_fd, err_fd;
  struct mcp_buf out, err;
  int status; /* the exit status, shell style */
  bool exited, cancelled;
};

int mcp_job_spawn (struct mcp_job *j, const char *runtime, char **argv,
                   sr_error **err);
/* Read what is there from the pipes; reap on pidfd.  True once done. */
bool mcp_job_pump (struct mcp_job *j, int fd);
void mcp_job_kill (struct mcp_job *j, int sig);
/* Block until it exited (SIGKILL after timeout_ms). */
void mcp_job_finish (struct mcp_job *j, int timeout_ms);
void mcp_job_free (struct mcp_job *j);
/* Remove a directory tree without following symlinks. */
void mcp_rmtree (const char *dir);

/* ---- tools.c: the tool table, argument checks, command lines ---- */
enum mcp_tool
{
  MCP_RUN_CODE,
  MCP_SESSION_START,
  MCP_SESSION_EXEC,
  MCP_SESSION_READ_FILE,
  MCP_SESSION_WRITE_FILE,
  MCP_SESSION_STOP,
  MCP_N_TOOLS
};

struct mcp_server;
void mcp_tools_list (struct mcp_server *s, yajl_gen g);
int mcp_tool_find (const char *name);
/* Check the arguments and build the job's command line; -1 with *err for
 * an invalid call (a JSON-RPC error), -2 with *err when the call is valid
 * but could not be started (a tool error). */
int mcp_tool_prepare (struct mcp_server *s, int tool, yajl_val args,
                      struct mcp_job *j, char ***argv, sr_error **err);

/* ---- result.c: a finished job as a tools/call result ---- */
/* Emit the result object of a finished job; updates the session list. */
void mcp_result_emit (struct mcp_server *s, struct mcp_job *j, yajl_gen g);
/* The output schema of a tool (JSON text). */
const char *mcp_output_schema (int tool);

/* ---- server.c ---- */
#define MCP_MAX_JOBS 8 /* executions at once */
struct mcp_server
{
  struct mcp_policy policy;
  const char *runtime; /* the sandrun binary that runs executions */
  const char *root;    /* sandrun --root for sessions, or NULL */
  int out_fd;
  bool structured; /* the protocol version has structuredContent */
  bool no_spawn;   /* fuzzing: every tool call fails before spawning */
  char *protocol;
  struct mcp_job *jobs;
  size_t n_jobs;
  char **sessions; /* the sessions this server started */
  unsigned long next_session;
  char *describe; /* mcp_policy_describe */
};

void mcp_server_init (struct mcp_server *s, int out_fd);
void mcp_server_free (struct mcp_server *s);
/* Handle one line of input (one JSON-RPC message). */
void mcp_handle_line (struct mcp_server *s, const char *line, size_t len);
/* Send a message (one line); an error response (id NULL: null); the
 * response to a job's request. */
void mcp_send (struct mcp_server *s, yajl_gen g);
void mcp_send_error (struct mcp_server *s, const char *id, bool id_is_str,
                     int code, const char *msg);
void mcp_send_result (struct mcp_server *s, struct mcp_job *j);
void mcp_session_add (struct mcp_server *s, const char *name);
void mcp_session_remove (struct mcp_server *s, const char *name);
bool mcp_session_known (struct mcp_server *s, const char *name);
/* The loop: stdin until EOF or a signal; then stop everything. */
int mcp_serve (struct mcp_server *s, sr_error **err);

#endif
