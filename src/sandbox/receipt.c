/* The receipt (see receipt.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy.h"
#include "receipt.h"
#include "sandrun/jsongen.h"
#include "sandrun/util.h"

/* The length of the valid UTF-8 sequence at s (of n bytes), or 0. */
static size_t
utf8_seq (const unsigned char *s, size_t n)
{
  size_t len;
  uint32_t cp;

  if (s[0] < 0x80)
    return 1;
  if (s[0] >= 0xc2 && s[0] <= 0xdf)
    len = 2, cp = s[0] & 0x1f;
  else if (s[0] >= 0xe0 && s[0] <= 0xef)
    len = 3, cp = s[0] & 0x0f;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4)
    len = 4, cp = s[0] & 0x07;
  else
    return 0;
  if (n < len)
    return 0;
  for (size_t i = 1; i < len; i++)
    {
      if ((s[i] & 0xc0) != 0x80)
        return 0;
      cp = (cp << 6) | (s[i] & 0x3f);
    }
  if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
      || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  return len;
}

char *
sb_utf8_escape (const char *s, size_t len, size_t *out_len)
{
  char *out = xmalloc (len * 4 + 1);
  size_t o = 0;

  for (size_t i = 0; i < len;)
    {
      size_t n = utf8_seq ((const unsigned char *) s + i, len - i);
      if (n == 0)
        {
          o += (size_t) sprintf (out + o, "\\x%02X", (unsigned char) s[i]);
          i++;
          continue;
        }
      memcpy (out + o, s + i, n);
      o += n;
      i += n;
    }
  out[o] = '\0';
  *out_len = o;
  return out;
}

static const char *
command_name (const struct sb_options *o)
{
  const char *slash = strrchr (o->argv[0], '/');
  return slash != NULL ? slash + 1 : o->argv[0];
}

static void
hit (struct sb_receipt *r, const char *limit)
{
  if (r->limit_exceeded == NULL)
    r->limit_exceeded = limit;
  strv_append (&r->limits_hit, limit);
}

/* Limits that were reached but need not have ended the run. */
static void
note (struct sb_receipt *r, const char *limit)
{
  strv_append (&r->limits_hit, limit);
}

static bool
file_at_size_limit (const struct sb_receipt *r)
{
  for (size_t i = 0; r->files != NULL && i < r->files->n; i++)
    if (strcmp (r->files->v[i].change, "deleted") != 0
        && S_ISREG (r->files->v[i].mode)
        && r->files->v[i].size >= r->o->file_size)
      return true;
  return false;
}

static char *
exit_message (const struct sb_receipt *r, const char *cmd)
{
  if (r->res->start_error != NULL)
    return xasprintf ("%s could not be started in the sandbox: %s", cmd,
                      r->res->start_error);
  if (r->res->signal != 0)
    return xasprintf (
        "%s was killed by signal SIG%s", cmd,
        sigabbrev_np (r->res->signal) ? sigabbrev_np (r->res->signal) : "?");
  return xasprintf ("%s exited with status %d", cmd, r->res->exit_code);
}

static char *
limit_message (const struct sb_receipt *r, const char *cmd)
{
  const struct sb_options *o = r->o;
  const char *l = r->limit_exceeded;
  _cleanup_free_ char *sz = NULL;

  if (strcmp (l, "timeout") == 0)
    return sz = sb_format_duration (o->timeout_ms),
           xasprintf ("the execution exceeded its %s wall-clock limit and was "
                      "stopped",
                      sz);
  if (strcmp (l, "memory") == 0)
    return sz = sb_format_size (o->memory),
           xasprintf ("%s was killed by the kernel when the sandbox used its "
                      "%s memory limit",
                      cmd, sz);
  if (strcmp (l, "cpu") == 0)
    return xasprintf ("%s used its %llu s of CPU time and was stopped", cmd,
                      (unsigned long long) o->cpu_time_s);
  if (strcmp (l, "pids") == 0)
    return xasprintf (
        "%s reached the limit of %lld processes: creating another one failed",
        cmd, (long long) o->pids);
  if (strcmp (l, "output") == 0)
    return sz = sb_format_size (o->output_limit),
           xasprintf (
               "%s wrote more than its %s output limit on %s and was stopped",
               cmd, sz, r->out->truncated ? "stdout" : "stderr");
  if (strcmp (l, "disk") == 0 && r->usage.workdir_stopped)
    return sz = sb_format_size (o->disk),
           xasprintf ("%s wrote more than its %s disk limit into /work and "
                      "was stopped",
                      cmd, sz);
  if (strcmp (l, "disk") == 0)
    return sz = sb_format_size (r->usage.work_full ? o->disk : o->tmp_size),
           xasprintf ("%s filled the %s of %s and further writes failed", cmd,
                      sz, r->usage.work_full ? "/work" : "/tmp");
  if (strcmp (l, "network_bytes") == 0)
    return sz = sb_format_size (o->net_max_bytes),
           xasprintf ("%s used the sandbox's %s network limit and its "
                      "connections were closed",
                      cmd, sz);
  if (strcmp (l, "file_size") == 0)
    return sz = sb_format_size (o->file_size),
           xasprintf (
               "%s tried to write a file larger than its %s file-size limit",
               cmd, sz);
  return xstrdup ("the execution was stopped");
}

void
sb_receipt_judge (struct sb_receipt *r)
{
  const struct sb_outcome *res = r->res;
  const char *cmd = command_name (r->o);
  bool failed = res->signal != 0 || res->exit_code != 0;

  if (res->timed_out)
    hit (r, "timeout");
  if (r->usage.oom_kills > 0)
    hit (r, "memory");
  else if (r->usage.memory_max_events > 0)
    note (r, "memory");
  if (res->output_exceeded)
    hit (r, "output");
  if (res->signal == SIGXCPU
      || (r->o->cpu_time_s > 0 && res->signal == SIGKILL
          && r->usage.cpu_user_us + r->usage.cpu_system_us
                 >= r->o->cpu_time_s * 1000000))
    hit (r, "cpu");
  if (res->signal == SIGXFSZ || (failed && file_at_size_limit (r)))
    hit (r, "file_size");
  else if (file_at_size_limit (r))
    note (r, "file_size");
  if (r->usage.work_full || r->usage.tmp_full)
    (failed ? hit : note) (r, "disk");
  if (r->usage.pids_max_events > 0)
    (failed ? hit : note) (r, "pids");
  if (r->egress != NULL && r->egress->bytes_limit_hit)
    (failed ? hit : note) (r, "network_bytes");
  if (r->egress != NULL && r->egress->connections_limit_hit)
    note (r, "network_connections");
  if (r->egress != NULL && r->egress->denied > 0)
    note (r, "network");

  _cleanup_free_ char *base = r->limit_exceeded != NULL
                                  ? limit_message (r, cmd)
                                  : exit_message (r, cmd);
  const char *denial
      = r->egress != NULL ? sb_egress_first_denial (r->egress) : NULL;
  if (failed && r->limit_exceeded == NULL && denial != NULL)
    {
      /* a refused connection is the likely cause: say which */
      char *with = xasprintf (
          "%s; the sandbox's network access was refused (%s)", base, denial);
      free (base);
      base = with;
    }
  if (res->interrupted != 0)
    r->message = xasprintf (
        "the execution was interrupted: sandrun received SIG%s "
        "and stopped the sandbox (%s)",
        sigabbrev_np (res->interrupted) ? sigabbrev_np (res->interrupted)
                                        : "a signal",
        base);
  else
    r->message = xstrdup (base);
}

static void
gen_output (yajl_gen g, const char *key, const struct sb_stream *st)
{
  size_t n;
  _cleanup_free_ char *text
      = sb_utf8_escape (st->data ? st->data : "", st->len, &n);
  sr_json_gen_str (g, key);
  yajl_gen_string (g, (const unsigned char *) text, n);
}

static void
gen_files (yajl_gen g, const struct sb_files *f)
{
  sr_json_gen_str (g, "files");
  yajl_gen_array_open (g);
  for (size_t i = 0; f != NULL && i < f->n; i++)
    {
      const struct sb_file *e = &f->v[i];
      size_t n;
      _cleanup_free_ char *path
          = sb_utf8_escape (e->path, strlen (e->path), &n);
      yajl_gen_map_open (g);
      sr_json_gen_str (g, "path");
      yajl_gen_string (g, (const unsigned char *) path, n);
      sr_json_gen_key_str (g, "change", e->change);
      sr_json_gen_str (g, "size");
      if (strcmp (e->change, "deleted") == 0)
        yajl_gen_null (g);
      else
        yajl_gen_integer (g, (long long) e->size);
      sr_json_gen_key_str (g, "sha256", e->has_sha256 ? e->sha256 : NULL);
      if (strcmp (e->change, "deleted") != 0 && !S_ISREG (e->mode))
        sr_json_gen_key_str (g, "type",
                             S_ISDIR (e->mode)   ? "directory"
                             : S_ISLNK (e->mode) ? "symlink"
                                                 : "other");
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

static void
gen_usage (yajl_gen g, const struct sb_receipt *r)
{
  const struct sb_usage *u = &r->usage;
  sr_json_gen_key_int (g, "duration_ms", r->res->duration_ms);
  sr_json_gen_str (g, "cpu_ms");
  yajl_gen_map_open (g);
  sr_json_gen_key_int (g, "user", (long long) (u->cpu_user_us / 1000));
  sr_json_gen_key_int (g, "system", (long long) (u->cpu_system_us / 1000));
  yajl_gen_map_close (g);
  sr_json_gen_key_int (g, "peak_memory_bytes",
                       (long long) u->peak_memory_bytes);
  sr_json_gen_key_int (g, "pids_peak", (long long) u->pids_peak);
}

static void
gen_status (yajl_gen g, const struct sb_receipt *r)
{
  sr_json_gen_str (g, "exit_code");
  if (r->res->signal != 0)
    yajl_gen_null (g);
  else
    yajl_gen_integer (g, r->res->exit_code);
  sr_json_gen_str (g, "signal");
  if (r->res->signal != 0 && sigabbrev_np (r->res->signal) != NULL)
    {
      _cleanup_free_ char *name
          = xasprintf ("SIG%s", sigabbrev_np (r->res->signal));
      sr_json_gen_str (g, name);
    }
  else
    yajl_gen_null (g);
  sr_json_gen_key_str (g, "limit_exceeded", r->limit_exceeded);
  sr_json_gen_str (g, "limits_hit");
  yajl_gen_array_open (g);
  for (size_t i = 0; r->limits_hit != NULL && r->limits_hit[i] != NULL; i++)
    sr_json_gen_str (g, r->limits_hit[i]);
  yajl_gen_array_close (g);
  sr_json_gen_str (g, "interrupted");
  yajl_gen_bool (g, r->res->interrupted != 0);
  sr_json_gen_key_str (g, "message", r->message);
}

static void
gen_text (yajl_gen g, const char *key, const char *v)
{
  size_t n;
  sr_json_gen_str (g, key);
  if (v == NULL)
    {
      yajl_gen_null (g);
      return;
    }
  _cleanup_free_ char *text = sb_utf8_escape (v, strlen (v), &n);
  yajl_gen_string (g, (const unsigned char *) text, n);
}

static void
gen_kernel (yajl_gen g, const struct sb_kernel_result *k, bool with_output)
{
  sr_json_gen_str (g, "kernel");
  yajl_gen_map_open (g);
  gen_text (g, "exception", k->exception);
  if (with_output)
    {
      gen_text (g, "traceback", k->traceback);
      gen_text (g, "value", k->value);
    }
  sr_json_gen_str (g, "interrupted");
  yajl_gen_bool (g, k->interrupted);
  sr_json_gen_str (g, "restarted");
  yajl_gen_bool (g, k->restarted);
  sr_json_gen_str (g, "state_lost");
  yajl_gen_bool (g, k->state_lost);
  yajl_gen_map_close (g);
}

char *
sb_receipt_json (const struct sb_receipt *r, bool with_output, bool pretty)
{
  yajl_gen g = sr_json_gen_new (pretty);

  yajl_gen_map_open (g);
  sr_json_gen_key_str (g, "receipt_version", SB_RECEIPT_VERSION);
  sr_json_gen_key_str (g, "id", r->b->id);
  sr_json_gen_key_str (g, "session", r->session);
  sr_json_gen_str (g, "command");
  yajl_gen_array_open (g);
  for (size_t i = 0; r->o->argv[i] != NULL; i++)
    {
      size_t n;
      _cleanup_free_ char *a
          = sb_utf8_escape (r->o->argv[i], strlen (r->o->argv[i]), &n);
      yajl_gen_string (g, (const unsigned char *) a, n);
    }
  yajl_gen_array_close (g);
  sr_json_gen_key_str (g, "started_at", r->started_at);
  sr_json_gen_key_str (g, "finished_at", r->finished_at);
  gen_usage (g, r);
  gen_status (g, r);
  if (with_output)
    {
      gen_output (g, "stdout", r->out);
      gen_output (g, "stderr", r->err);
    }
  sr_json_gen_str (g, "stdout_truncated");
  yajl_gen_bool (g, r->out->truncated);
  sr_json_gen_str (g, "stderr_truncated");
  yajl_gen_bool (g, r->err->truncated);
  gen_files (g, r->files);
  if (r->kernel != NULL)
    gen_kernel (g, r->kernel, with_output);
  sr_json_gen_str (g, "files_incomplete");
  yajl_gen_bool (g, r->files != NULL && r->files->incomplete);
  sr_json_gen_str (g, "policy");
  sb_policy_describe (g, r->o, r->b);
  /* empty with --net none: no connection can be made */
  sr_json_gen_str (g, "network");
  sb_egress_describe (g, r->egress);
  sr_json_gen_key_str (g, "sandrun", PACKAGE_VERSION);
  yajl_gen_map_close (g);
  return sr_json_gen_take (g, true);
}

void
sb_receipt_clear (struct sb_receipt *r)
{
  strv_free (r->limits_hit);
  free (r->message);
  free (r->started_at);
  free (r->finished_at);
  r->limits_hit = NULL;
  r->message = r->started_at = r->finished_at = NULL;
}

void
sb_kernel_result_clear (struct sb_kernel_result *k)
{
  free (k->exception);
  free (k->traceback);
  free (k->value);
  memset (k, 0, sizeof *k);
}

int
sb_receipt_emit (const struct sb_receipt *r, const struct sb_options *o,
                 sr_error **err)
{
  if (o->receipt != NULL)
    {
      _cleanup_free_ char *json = sb_receipt_json (r, true, true);
      if (strcmp (o->receipt, "-") == 0)
        sr_write_all (1, json, strlen (json));
      else
        {
          _cleanup_close_ int fd = open (
              o->receipt, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
          if (fd < 0 || sr_write_all (fd, json, strlen (json)) < 0)
            return sr_fail (err, errno, "--receipt \"%s\"", o->receipt);
        }
    }
  if (o->audit_log != NULL)
    {
      _cleanup_free_ char *line = sb_receipt_json (r, false, false);
      _cleanup_close_ int fd = open (
          o->audit_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (fd < 0 || sr_write_all (fd, line, strlen (line)) < 0)
        return sr_fail (err, errno, "--audit-log \"%s\"", o->audit_log);
    }
  return 0;
}

void
sb_receipt_set (struct sb_receipt *r, const struct sb_options *o,
                const struct sb_bundle *b, const struct sb_supervisor *sv,
                const struct sb_outcome *res, const struct sb_files *files)
{
  r->o = o;
  r->b = b;
  r->res = res;
  r->out = &sv->out;
  r->err = &sv->err;
  r->files = files;
}
