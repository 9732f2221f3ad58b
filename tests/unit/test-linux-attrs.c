/* The linux attributes' parsers and checks: the "0-3,7" list parser on
 * well-formed and hostile input, and the refusals that happen before any
 * system call (so the test process itself is never changed). */
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "../../src/core/linux_attrs_internal.h"
#include "sandrun/util.h"
#include "unit.h"

static bool
parses (const char *s, unsigned long limit, struct sr_idset *out)
{
  _cleanup_error_ sr_error *err = NULL;
  return sr_idset_parse (s, limit, "0-7", "test", "CPU", out, &err) == 0;
}

static bool
refused (const char *s, unsigned long limit, const char *want)
{
  _cleanup_error_ sr_error *err = NULL;
  struct sr_idset set;
  if (sr_idset_parse (s, limit, "0-7", "test", "CPU", &set, &err) == 0)
    {
      sr_idset_clear (&set);
      return false;
    }
  if (want != NULL && strstr (err->msg, want) == NULL)
    {
      printf ("#   message: %s\n", err->msg);
      return false;
    }
  return true;
}

static void
test_idset_valid (void)
{
  struct sr_idset set;

  CHECK (parses ("0-3,7", 8, &set) && set.count == 5 && set.high == 8
             && sr_idset_has (&set, 0) && sr_idset_has (&set, 3)
             && !sr_idset_has (&set, 4) && sr_idset_has (&set, 7),
         "0-3,7 is 0,1,2,3,7");
  sr_idset_clear (&set);
  CHECK (parses ("", 8, &set) && set.count == 0 && set.bits == NULL
             && set.high == 0,
         "\"\" is the empty set");
  sr_idset_clear (&set);
  CHECK (parses ("5", 8, &set) && set.count == 1 && sr_idset_has (&set, 5),
         "a single id");
  sr_idset_clear (&set);
  CHECK (parses ("2,2,1-3", 8, &set) && set.count == 3,
         "overlaps are counted once");
  sr_idset_clear (&set);
  CHECK (parses ("3-3", 8, &set) && set.count == 1, "a one-id range");
  sr_idset_clear (&set);
  CHECK (parses ("100-130", 200, &set) && set.count == 31
             && set.nwords * sizeof (unsigned long) * CHAR_BIT > 130
             && sr_idset_has (&set, 130) && !sr_idset_has (&set, 131),
         "a range over a word boundary");
  sr_idset_clear (&set);
}

static void
test_idset_refused (void)
{
  static const char *const bad[] = {
    "0-", "-1", "1-0", "a",   "0,,1",  " 0",  "0 ",   "0,",
    ",0", "+1", "0x1", "1e3", "0-3-5", "0;1", "0--1",
  };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    CHECK (refused (bad[i], 8, "invalid list"), "refused: \"%s\"", bad[i]);
  CHECK (refused ("0\n", 8, "invalid list"), "refused: a trailing newline");
  CHECK (refused ("8", 8, "CPU 8 does not exist on this host (0-7)"),
         "an id at the limit names the valid range");
  CHECK (refused ("0-99999999999999999999999", 8, "does not exist"),
         "an overflowing id is out of range, not wrapped");
  CHECK (refused ("0-9000", 100000, "does not exist"),
         "the limit is capped at SR_IDSET_MAX");
}

static bool
personality_refused (const char *domain, const char *flag, const char *want)
{
  _cleanup_error_ sr_error *err = NULL;
  char *flags[] = { (char *) flag, NULL };
  oci_personality p
      = { .domain = (char *) domain, .flags = flag ? flags : NULL };
  return sr_personality_apply (&p, &err) < 0 && strstr (err->msg, want);
}

static bool
scheduler_refused (oci_scheduler s, const char *want)
{
  _cleanup_error_ sr_error *err = NULL;
  if (sr_scheduler_apply (&s, &err) == 0)
    return false;
  if (strstr (err->msg, want) == NULL)
    printf ("#   message: %s\n", err->msg);
  return strstr (err->msg, want) != NULL;
}

static bool
ioprio_refused (const char *klass, int prio, const char *want)
{
  _cleanup_error_ sr_error *err = NULL;
  oci_io_priority io = { .klass = (char *) klass, .priority = prio };
  return sr_io_priority_apply (&io, &err) < 0 && strstr (err->msg, want);
}

static void
test_refusals (void)
{
  CHECK (personality_refused ("LINUX64", NULL, "\"LINUX64\""),
         "personality: unknown domain");
  CHECK (personality_refused ("LINUX", "ADDR_NO_RANDOMIZE",
                              "\"ADDR_NO_RANDOMIZE\" is not supported"),
         "personality: any flag");

  CHECK (scheduler_refused ((oci_scheduler){ .policy = "SCHED_X" },
                            "\"SCHED_X\" is unknown"),
         "scheduler: unknown policy");
  CHECK (scheduler_refused ((oci_scheduler){ .policy = "SCHED_ISO" },
                            "not implemented"),
         "scheduler: SCHED_ISO");
  CHECK (scheduler_refused (
             (oci_scheduler){ .policy = "SCHED_OTHER", .nice = { true, -21 } },
             "nice -21"),
         "scheduler: nice below -20");
  CHECK (scheduler_refused ((oci_scheduler){ .policy = "SCHED_BATCH",
                                             .priority = { true, 1 } },
                            "only for SCHED_FIFO"),
         "scheduler: priority with a fair policy");
  CHECK (scheduler_refused ((oci_scheduler){ .policy = "SCHED_RR" },
                            "priority 0 is out of range"),
         "scheduler: realtime without a priority");
  CHECK (scheduler_refused ((oci_scheduler){ .policy = "SCHED_OTHER",
                                             .period = { true, 10 } },
                            "only for SCHED_DEADLINE"),
         "scheduler: deadline parameters with another policy");
  char *flags[] = { "SCHED_FLAG_X", NULL };
  CHECK (scheduler_refused (
             (oci_scheduler){ .policy = "SCHED_OTHER", .flags = flags },
             "\"SCHED_FLAG_X\""),
         "scheduler: unknown flag");

  CHECK (ioprio_refused ("IOPRIO_CLASS_X", 0, "\"IOPRIO_CLASS_X\""),
         "ioPriority: unknown class");
  CHECK (ioprio_refused ("IOPRIO_CLASS_BE", 8, "priority 8"),
         "ioPriority: priority 8");
  CHECK (ioprio_refused ("IOPRIO_CLASS_BE", -1, "priority -1"),
         "ioPriority: negative priority");
}

static void
test_memory_policy_names (void)
{
  size_t n = 0;
  while (sr_memory_policy_mode_name (n) != NULL)
    n++;
  CHECK (n == 7, "seven memory policy modes");
  n = 0;
  while (sr_memory_policy_flag_name (n) != NULL)
    n++;
  CHECK (n == 3, "three memory policy flags");

  _cleanup_error_ sr_error *err = NULL;
  oci_memory_policy mp = { .mode = "MPOL_NOPE", .nodes = "0" };
  CHECK (sr_memory_policy_apply (&mp, &err) < 0
             && strstr (err->msg, "\"MPOL_NOPE\" is unknown"),
         "memoryPolicy: unknown mode refused before set_mempolicy");
}

int
main (void)
{
  test_idset_valid ();
  test_idset_refused ();
  test_refusals ();
  test_memory_policy_names ();
  return unit_finish ();
}
