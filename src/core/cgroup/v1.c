/* cgroup v1 specifics: cpuset inheritance and the freezer controller. */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

/* How long a freeze may take before it is given up (and undone). */
#define FREEZE_WAIT_MS 2000

/* A new v1 cpuset starts with empty cpus and mems, and a process cannot
 * join it (ENOSPC) until both are set: take the parent's. */
static int
inherit_cpuset_file (int parentfd, int dirfd, const char *file, sr_error **err)
{
  _cleanup_free_ char *mine = NULL, *parent = NULL;
  if (sr_cg_read (dirfd, file, &mine, err) < 0)
    return -1;
  if (mine[0] != '\0')
    return 0;
  if (sr_cg_read (parentfd, file, &parent, err) < 0)
    return -1;
  return sr_cg_write (dirfd, file, parent, err);
}

int
sr_cg_v1_prepare_cpuset (unsigned enable, int parentfd, int dirfd,
                         bool created, sr_error **err)
{
  (void) enable;
  (void) created;
  if (inherit_cpuset_file (parentfd, dirfd, "cpuset.cpus", err) < 0)
    return -1;
  return inherit_cpuset_file (parentfd, dirfd, "cpuset.mems", err);
}

int
sr_cg_v1_is_frozen (int dirfd, bool *frozen, sr_error **err)
{
  _cleanup_free_ char *state = NULL;
  if (sr_cg_read (dirfd, "freezer.state", &state, err) < 0)
    return -1;
  *frozen = strcmp (state, "FROZEN") == 0;
  return 0;
}

int
sr_cg_v1_freeze (int dirfd, bool frozen, sr_error **err)
{
  const char *want = frozen ? "FROZEN" : "THAWED";
  for (unsigned waited = 0;; waited += 5)
    {
      /* Writing again nudges a freeze that stalls in FREEZING (a task that
       * was forking or in an uninterruptible sleep at the first try). */
      if (waited % 100 == 0 && sr_cg_write (dirfd, "freezer.state", want, err) < 0)
        return -1;
      _cleanup_free_ char *state = NULL;
      if (sr_cg_read (dirfd, "freezer.state", &state, err) < 0)
        return -1;
      if (strcmp (state, want) == 0)
        return 0;
      if (waited >= FREEZE_WAIT_MS)
        {
          if (frozen)
            sr_cg_write (dirfd, "freezer.state", "THAWED", NULL);
          return sr_fail (err, EBUSY, "cgroup: freezer.state stays \"%s\"",
                          state);
        }
      sr_cg_nap (5);
    }
}
