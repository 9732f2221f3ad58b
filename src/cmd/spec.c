#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "sandrun/util.h"

static const struct option spec_options[] = {
  { "bundle", required_argument, NULL, 'b' },
  { "rootless", no_argument, NULL, 'r' },
  { NULL, 0, NULL, 0 },
};

int
cmd_spec (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  const char *bundle = ".";
  bool rootless = false;
  int c;

  (void) g;
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+b:", spec_options, NULL)) != -1)
    switch (c)
      {
      case 'b': bundle = optarg; break;
      case 'r': rootless = true; break;
      default:
        return sr_fail (err, EINVAL, "spec: unknown option \"%s\"", argv[optind - 1]), 1;
      }
  if (cmd_expect_operands ("spec", argc, argv, optind, 0, "[--bundle DIR] [--rootless]", err) < 0)
    return 1;

  _cleanup_close_ int dirfd = open (bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return sr_fail (err, errno, "spec: bundle \"%s\"", bundle), 1;
  _cleanup_close_ int fd = openat (dirfd, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return sr_fail (err, errno, "spec: create \"%s/config.json\"", bundle), 1;
  _cleanup_free_ char *text = sr_spec_default (rootless, geteuid (), getegid ());
  if (sr_write_all (fd, text, strlen (text)) < 0)
    return sr_fail (err, errno, "spec: write \"%s/config.json\"", bundle), 1;
  return 0;
}
