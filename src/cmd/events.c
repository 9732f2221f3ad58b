#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "sandrun/events.h"

#define USAGE "[--interval DURATION] [--stats] <container-id>"

/* Go's time.ParseDuration ("5s", "1m30s", "250ms", "1.5h"), as runc takes
 * --interval; the result in milliseconds (a positive one rounds up to 1). */
static int
parse_duration (const char *s, unsigned long long *ms)
{
  static const struct
  {
    const char *unit;
    double ns;
  } units[] = {
    { "ns", 1 }, { "us", 1e3 }, { "\xc2\xb5s", 1e3 }, { "\xce\xbcs", 1e3 },
    { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 },
  };
  double total = 0;
  bool negative = *s == '-';
  if (*s == '-' || *s == '+')
    s++;
  if (strcmp (s, "0") == 0)
    {
      *ms = 0;
      return 0;
    }
  if (*s == '\0')
    return -1;
  while (*s)
    {
      char *end;
      if (!((*s >= '0' && *s <= '9') || *s == '.'))
        return -1;
      double v = strtod (s, &end);
      if (end == s)
        return -1;
      size_t best = 0, best_len = 0;
      for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        {
          size_t l = strlen (units[i].unit);
          if (l > best_len && strncmp (end, units[i].unit, l) == 0)
            best = i, best_len = l;
        }
      if (best_len == 0)
        return -1;
      total += v * units[best].ns;
      s = end + best_len;
    }
  if (total > 9.2e18)
    return -1;
  if (negative || total <= 0)
    {
      *ms = 0;
      return 0;
    }
  *ms = (unsigned long long) (total / 1e6);
  if (*ms == 0)
    *ms = 1;
  return 0;
}

static const struct option events_options[] = {
  { "interval", required_argument, NULL, 'i' },
  { "stats", no_argument, NULL, 's' },
  { NULL, 0, NULL, 0 },
};

int
cmd_events (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  struct sr_events_opts opts = { .interval_ms = 5000 };
  int c;

  opterr = 0;
  while ((c = getopt_long (argc, argv, "+", events_options, NULL)) != -1)
    switch (c)
      {
      case 'i':
        if (parse_duration (optarg, &opts.interval_ms) < 0)
          return sr_fail (err, 0, "events: invalid value \"%s\" for "
                          "--interval: expected a duration such as 5s or "
                          "500ms", optarg), 1;
        break;
      case 's':
        opts.stats_only = true;
        break;
      default:
        return sr_fail (err, 0, "events: unknown option \"%s\" (usage: "
                        "sandrun events " USAGE ")", argv[optind - 1]), 1;
      }
  if (cmd_expect_operands ("events", argc, argv, optind, 1, USAGE, err) < 0)
    return 1;
  return sr_container_events (g, argv[optind], &opts, stdout, err) < 0 ? 1 : 0;
}
