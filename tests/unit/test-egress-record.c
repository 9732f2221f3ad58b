/* The sandbox's reading of the gateway's record (src/sandbox/egress.c): a
 * one-shot's whole log up to the summary, and a session execution's window
 * up to its own mark, other executions' marks skipped. */
#include <string.h>

#include "sandbox/egress.h"
#include "sandrun/util.h"
#include "unit.h"

#define ENTRY(host, decision)                                                 \
  "{\"time\":\"t\",\"protocol\":\"http\",\"host\":\"" host                    \
  "\",\"port\":80,\"address\":null,\"decision\":\"" decision                  \
  "\",\"reason\":null,\"bytes_out\":1,\"bytes_in\":2,\"duration_ms\":3}\n"

static void
test_summary (void)
{
  struct sb_egress e = SB_EGRESS_INIT;
  char *buf = xstrdup (ENTRY ("a.test", "allowed") ENTRY (
      "b.test",
      "denied") "{\"summary\":true,\"bytes_limit_hit\":true,"
                "\"connections_limit_hit\":false,\"unrecorded\":0}\n");
  size_t len = strlen (buf);
  CHECK (sb_egress_take_record (&e, buf, NULL) == (ssize_t) len,
         "the summary ends the one-shot's record");
  CHECK (e.n_entries == 2 && e.denied == 1, "two attempts, one denied");
  CHECK_STR (e.entries[1].host, "b.test", "the second attempt's host");
  CHECK (e.bytes_limit_hit && !e.connections_limit_hit,
         "the summary's limits");
  CHECK (!e.incomplete, "complete");
  free (buf);
  sb_egress_clear (&e);
}

static void
test_marks (void)
{
  struct sb_egress e = SB_EGRESS_INIT;
  const char *mine = "{\"mark\":\"1-2-end\",\"bytes_limit_hit\":false,"
                     "\"connections_limit_hit\":true,\"unrecorded\":4}\n";
  _cleanup_free_ char *buf = xasprintf (
      "%s%s%s%s%s", ENTRY ("a.test", "allowed"),
      "{\"mark\":\"9-9-start\",\"bytes_limit_hit\":true}\n",
      ENTRY ("b.test", "denied"), mine, ENTRY ("later.test", "allowed"));
  size_t want = strstr (buf, mine) - buf + strlen (mine);
  CHECK (sb_egress_take_record (&e, buf, "1-2-end") == (ssize_t) want,
         "the window ends past the execution's own mark");
  CHECK (e.n_entries == 2, "the attempts before it, not the later one");
  CHECK (!e.bytes_limit_hit, "another execution's mark is not ours");
  CHECK (e.connections_limit_hit && e.unrecorded == 4, "our mark's state");
  sb_egress_clear (&e);

  _cleanup_free_ char *none
      = xstrdup (ENTRY ("a.test", "allowed") "{\"summary\":true}\n");
  CHECK (sb_egress_take_record (&e, none, "1-2-end") == -1,
         "no mark of ours: not found (a summary does not end a window)");
  sb_egress_clear (&e);
  _cleanup_free_ char *partial = xstrdup ("{\"mark\":\"1-2-end\"");
  CHECK (sb_egress_take_record (&e, partial, "1-2-end") == -1,
         "a line not yet complete is not read");
  sb_egress_clear (&e);
  _cleanup_free_ char *bad = xstrdup ("{\"host\":\n{\"mark\":\"x\"}\n");
  CHECK (sb_egress_take_record (&e, bad, "x") > 0 && e.incomplete,
         "a malformed line makes the record incomplete");
  sb_egress_clear (&e);
}

int
main (void)
{
  test_summary ();
  test_marks ();
  return unit_finish ();
}
