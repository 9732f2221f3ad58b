/* Handing the seccomp user-notification fd to the agent at listenerPath
 * (runtime-spec config-linux.md "Seccomp", runtime.md
 * "containerProcessState"): one message on a unix stream socket, the fd as
 * SCM_RIGHTS and as payload
 *   {"ociVersion": ..., "fds": ["seccompFd"], "pid": N,
 *    "metadata": listenerMetadata, "state": <the container state>}. */
#include <errno.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "oci-spec/oci-spec.h"
#include "util/fdpass.h"
#include "sandrun/jsongen.h"
#include "core/seccomp.h"
#include "core/sync.h"
#include "sandrun/util.h"

/* The state is our own document; the bound only guards the recursion. */
#define STATE_MAX_DEPTH 64

static void
yajl_gen_freep (yajl_gen *g)
{
  if (*g != NULL)
    yajl_gen_free (*g);
}

static void
yajl_tree_freep (yajl_val *v)
{
  if (*v != NULL)
    yajl_tree_free (*v);
}

/* Re-emit a parsed value: yajl_gen has no way to splice raw JSON. */
static int
gen_value (yajl_gen g, yajl_val v, int depth)
{
  size_t i;

  if (depth > STATE_MAX_DEPTH)
    return -1;
  switch (v->type)
    {
    case yajl_t_string:
      sr_json_gen_str (g, v->u.string);
      return 0;
    case yajl_t_number:
      /* The original text keeps integers beyond double precision exact. */
      yajl_gen_number (g, v->u.number.r, strlen (v->u.number.r));
      return 0;
    case yajl_t_true:
    case yajl_t_false:
      yajl_gen_bool (g, v->type == yajl_t_true);
      return 0;
    case yajl_t_null:
      yajl_gen_null (g);
      return 0;
    case yajl_t_array:
      yajl_gen_array_open (g);
      for (i = 0; i < v->u.array.len; i++)
        if (gen_value (g, v->u.array.values[i], depth + 1) < 0)
          return -1;
      yajl_gen_array_close (g);
      return 0;
    case yajl_t_object:
      yajl_gen_map_open (g);
      for (i = 0; i < v->u.object.len; i++)
        {
          sr_json_gen_str (g, v->u.object.keys[i]);
          if (gen_value (g, v->u.object.values[i], depth + 1) < 0)
            return -1;
        }
      yajl_gen_map_close (g);
      return 0;
    default:
      return -1;
    }
}

/* The containerProcessState document into *out (malloc'd). */
static int
process_state_json (const oci_seccomp *profile, pid_t process_pid,
                    const char *state_json, char **out, size_t *len,
                    sr_error **err)
{
  const char *pid_path[] = { "pid", NULL };
  __attribute__ ((cleanup (yajl_tree_freep))) yajl_val state = NULL;
  __attribute__ ((cleanup (yajl_gen_freep))) yajl_gen g = NULL;
  const unsigned char *buf;
  char errbuf[256];
  yajl_val pid;

  state
      = yajl_tree_parse (state_json ? state_json : "", errbuf, sizeof errbuf);
  if (state == NULL || !YAJL_IS_OBJECT (state))
    return sr_fail (err, 0, "seccomp listener: invalid container state");
  pid = yajl_tree_get (state, pid_path, yajl_t_number);
  if (pid == NULL || !YAJL_IS_INTEGER (pid))
    return sr_fail (err, 0,
                    "seccomp listener: container state has no "
                    "pid");

  g = yajl_gen_alloc (NULL);
  if (g == NULL)
    return sr_fail (err, ENOMEM, "seccomp listener: yajl_gen_alloc");
  yajl_gen_map_open (g);
  sr_json_gen_str (g, "ociVersion");
  sr_json_gen_str (g, OCI_SPEC_VERSION);
  sr_json_gen_str (g, "fds");
  yajl_gen_array_open (g);
  sr_json_gen_str (g, "seccompFd");
  yajl_gen_array_close (g);
  /* The process the filter belongs to (an exec'd one is not the init). */
  sr_json_gen_str (g, "pid");
  yajl_gen_integer (g, process_pid > 0 ? process_pid : YAJL_GET_INTEGER (pid));
  if (profile->listener_metadata != NULL)
    {
      sr_json_gen_str (g, "metadata");
      sr_json_gen_str (g, profile->listener_metadata);
    }
  sr_json_gen_str (g, "state");
  if (gen_value (g, state, 0) < 0)
    return sr_fail (err, 0,
                    "seccomp listener: container state too "
                    "deep");
  yajl_gen_map_close (g);
  if (yajl_gen_get_buf (g, &buf, len) != yajl_gen_status_ok)
    return sr_fail (err, 0, "seccomp listener: cannot build JSON");
  *out = xstrndup ((const char *) buf, *len);
  return 0;
}

/* Connect to listenerPath (*sock) and build the message (*msg, *len). */
static int
listener_open (const oci_seccomp *profile, pid_t process_pid,
                          const char *state_json, int *sock, char **msg,
                          size_t *len, sr_error **err)
{
  _cleanup_free_ char *text = NULL;

  *sock = -1;
  *msg = NULL;
  if (profile == NULL || profile->listener_path == NULL
      || profile->listener_path[0] == '\0')
    return sr_fail (err, 0,
                    "seccomp: SCMP_ACT_NOTIFY needs a "
                    "listenerPath");
  if (process_state_json (profile, process_pid, state_json, &text, len, err) < 0)
    return -1;
  *sock = sr_unix_connect (profile->listener_path, err);
  if (*sock < 0)
    return sr_wrap (err, "seccomp listener \"%s\"", profile->listener_path);
  *msg = steal_pointer (&text);
  return 0;
}

int
sr_seccomp_send_to_listener (const oci_seccomp *profile, int notify_fd,
                             pid_t process_pid, const char *state_json,
                             sr_error **err)
{
  _cleanup_free_ char *msg = NULL;
  _cleanup_close_ int sock = -1;
  size_t len = 0;

  if (listener_open (profile, process_pid, state_json, &sock, &msg, &len, err) < 0)
    return -1;
  if (sr_send_fd (sock, notify_fd, msg, len, err) < 0)
    return sr_wrap (err, "seccomp listener \"%s\"", profile->listener_path);
  return 0;
}

int
sr_seccomp_hand_listener (const oci_seccomp *profile, int sync, pid_t process_pid,
                          const char *state_json, sr_error **err)
{
  _cleanup_close_ int sock = -1;
  _cleanup_free_ char *msg = NULL;
  size_t len;

  if (listener_open (profile, process_pid, state_json, &sock, &msg, &len, err) < 0)
    return -1;
  if (sr_sync_send_fd (sync, SR_FD_SECCOMP_LISTENER, sock, err) < 0)
    return -1;
  /* The state can outgrow one sync message (annotations): in pieces, each
   * DATA message's value saying whether more follow. */
  for (size_t off = 0;;)
    {
      char piece[SR_SYNC_MAX_TEXT + 1];
      size_t n = len - off < SR_SYNC_MAX_TEXT ? len - off : SR_SYNC_MAX_TEXT;

      memcpy (piece, msg + off, n);
      piece[n] = '\0';
      off += n;
      if (sr_sync_send (sync, SR_SYNC_DATA, off < len, piece, err) < 0)
        return -1;
      if (off == len)
        return 0;
    }
}
