/* The record of attempts: one JSON line per connection or DNS query on the
 * log fd, in the shape of the receipt's `network` entries, and a summary
 * line at the end with the limits the gateway enforced (mark lines, asked
 * for on the control socket, carry the same state in between). */
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "egress/gateway.h"
#include "sandrun/jsongen.h"
#include "sandrun/util.h"

static const char *const proto_names[] = { "tcp", "http", "https", "dns" };

void
eg_record_start (struct eg_record *r, enum eg_proto proto)
{
  memset (r, 0, sizeof *r);
  r->time = sr_now_rfc3339 ();
  r->proto = proto;
  r->start_ms = eg_now ();
}

/* An empty string is recorded as null. */
static const char *
or_null (const char *s)
{
  return s != NULL && s[0] != '\0' ? s : NULL;
}

char *
eg_record_json (const struct eg_record *r, int64_t now_ms)
{
  yajl_gen g = sr_json_gen_new (false);
  char addr[64] = "";
  if (r->has_address)
    eg_addr_str (&r->address, addr, sizeof addr);
  yajl_gen_map_open (g);
  sr_json_gen_key_str (g, "time", r->time);
  sr_json_gen_key_str (g, "protocol", proto_names[r->proto]);
  sr_json_gen_key_str (g, "host", or_null (r->host));
  sr_json_gen_key_int (g, "port", r->port);
  sr_json_gen_key_str (g, "address", or_null (addr));
  sr_json_gen_key_str (g, "decision", r->denied ? "denied" : "allowed");
  sr_json_gen_key_str (g, "reason", or_null (r->reason));
  sr_json_gen_key_int (g, "bytes_out", (long long) r->bytes_out);
  sr_json_gen_key_int (g, "bytes_in", (long long) r->bytes_in);
  sr_json_gen_key_int (g, "duration_ms", (long long) (now_ms - r->start_ms));
  yajl_gen_map_close (g);
  return sr_json_gen_take (g, true);
}

void
eg_record_write (struct gateway *gw, struct eg_record *r)
{
  if (r->time == NULL)
    return; /* already written */
  if (gw->n_records < EG_RECORDS_MAX)
    {
      _cleanup_free_ char *line = eg_record_json (r, eg_now ());
      if (sr_write_all (gw->log_fd, line, strlen (line)) >= 0)
        gw->n_records++;
    }
  else
    gw->n_unrecorded++;
  free (r->time);
  r->time = NULL;
}

/* The gateway's state as one line: the summary at the end, or a mark
 * (control.c) asked for by a session's execution. */
static void
write_state (struct gateway *gw, const char *mark)
{
  yajl_gen g = sr_json_gen_new (false);
  yajl_gen_map_open (g);
  if (mark != NULL)
    sr_json_gen_key_str (g, "mark", mark);
  else
    {
      sr_json_gen_str (g, "summary");
      yajl_gen_bool (g, 1);
    }
  sr_json_gen_str (g, "bytes_limit_hit");
  yajl_gen_bool (g, gw->bytes_cap_hit);
  sr_json_gen_str (g, "connections_limit_hit");
  yajl_gen_bool (g, gw->conns_cap_hit);
  sr_json_gen_key_int (g, "bytes_total", (long long) gw->bytes_total);
  sr_json_gen_key_int (g, "connections", (long long) gw->conns_opened);
  sr_json_gen_key_int (g, "unrecorded", (long long) gw->n_unrecorded);
  yajl_gen_map_close (g);
  _cleanup_free_ char *line = sr_json_gen_take (g, true);
  sr_write_all (gw->log_fd, line, strlen (line));
}

void
eg_record_summary (struct gateway *gw)
{
  write_state (gw, NULL);
}

void
eg_record_mark (struct gateway *gw, const char *token)
{
  write_state (gw, token);
}
