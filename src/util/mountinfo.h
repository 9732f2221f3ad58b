/* /proc/PID/mountinfo (proc(5)), one parser for the whole tree: the cgroup
 * code finds its hierarchies with it, the rootfs code the hierarchies to
 * show in a container. */
#ifndef SANDRUN_MOUNTINFO_H
#define SANDRUN_MOUNTINFO_H

#include <stdbool.h>

/* One line:
 *   id parent maj:min root point opts [optional...] - fstype source super
 * The strings point into the line; root, point and source are decoded (the
 * kernel writes ' ', '\t', '\n' and '\\' in them as \ooo). */
struct sr_mountinfo
{
  char *root;
  char *point;
  char *opts; /* the mount's own options */
  char *fstype;
  char *source;
  char *superopts; /* the filesystem's options */
};

/* Split `line` (one line, no newline) in place; false when it is not a
 * mountinfo line. */
bool sr_mountinfo_parse (char *line, struct sr_mountinfo *m);

/* Whether comma-separated `opts` holds `want` as a whole option. */
bool sr_mountinfo_has_opt (const char *opts, const char *want);

#endif
