/* cgroup v2 specifics: delegating controllers down the tree, the built-in
 * freezer and cgroup.kill. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

#define FREEZE_WAIT_MS 2000

static bool
list_has (const char *list, const char *word)
{
  size_t wl = strlen (word);
  for (const char *p = list; *p;)
    {
      p += strspn (p, " \n");
      size_t l = strcspn (p, " \n");
      if (l == wl && memcmp (p, word, wl) == 0)
        return true;
      p += l;
    }
  return false;
}

/* Enable in the parent each controller of `enable` that it has and does
 * not yet pass down, one at a time: one that cannot be enabled (a threaded
 * subtree, a parent with processes of its own) must not keep the others
 * off.  Resources for a controller that ends up missing fail later with
 * the file's name.  On a hybrid host `enable` is only what the config
 * needs (see docs/cgroups.md): a controller enabled in the cgroup2 root is
 * taken from cgroup v1 for the whole host. */
int
sr_cg_v2_prepare (unsigned enable, int parentfd, int dirfd, bool created,
                  sr_error **err)
{
  (void) dirfd;
  (void) created;
  _cleanup_free_ char *avail = NULL, *enabled = NULL;
  if (sr_cg_read (parentfd, "cgroup.controllers", &avail, err) < 0
      || sr_cg_read (parentfd, "cgroup.subtree_control", &enabled, err) < 0)
    return -1;
  char *save = NULL;
  for (char *c = strtok_r (avail, " ", &save); c != NULL;
       c = strtok_r (NULL, " ", &save))
    {
      int ctrl = sr_cg_ctrl_from_name (c);
      if (list_has (enabled, c) || ctrl < 0
          || (enable & SR_CG_BIT (ctrl)) == 0)
        continue;
      sr_error *e = NULL;
      if (sr_cg_writef (parentfd, "cgroup.subtree_control", &e, "+%s", c) < 0)
        {
          sr_debug ("%s", e->msg);
          sr_error_free (e);
        }
    }
  return 0;
}

int
sr_cg_v2_is_frozen (int dirfd, bool *frozen, sr_error **err)
{
  long long v = 0;
  if (sr_cg_read_key (dirfd, "cgroup.events", "frozen", &v, err) < 0)
    return -1;
  *frozen = v == 1;
  return 0;
}

int
sr_cg_v2_freeze (int dirfd, bool frozen, sr_error **err)
{
  if (sr_cg_write (dirfd, "cgroup.freeze", frozen ? "1" : "0", err) < 0)
    return -1;
  for (unsigned waited = 0;; waited += 5)
    {
      bool now;
      if (sr_cg_v2_is_frozen (dirfd, &now, err) < 0)
        return -1;
      if (now == frozen)
        return 0;
      if (waited >= FREEZE_WAIT_MS)
        {
          if (frozen)
            sr_cg_write (dirfd, "cgroup.freeze", "0", NULL);
          return sr_fail (err, EBUSY, "cgroup: %s timed out",
                          frozen ? "freeze" : "thaw");
        }
      sr_cg_nap (5);
    }
}

int
sr_cg_v2_kill (int dirfd, sr_error **err)
{
  if (faccessat (dirfd, "cgroup.kill", F_OK, 0) < 0 && errno == ENOENT)
    return 0; /* before Linux 5.14 */
  if (sr_cg_write (dirfd, "cgroup.kill", "1", err) < 0)
    return -1;
  return 1;
}
