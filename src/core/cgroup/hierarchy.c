/* Which cgroup hierarchies the host mounts, where, and where this process
 * sits in each.  Pure v2 needs only /proc/self/cgroup; v1 and hybrid hosts
 * also need /proc/self/mountinfo, the one file that tells which mount holds
 * which (possibly co-mounted, e.g. "cpu,cpuacct") controllers and from which
 * root of the hierarchy. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "util/mountinfo.h"
#include "sandrun/util.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

static const char *const ctrl_names[SR_CG__COUNT] = {
  [SR_CG_CPU] = "cpu",         [SR_CG_CPUACCT] = "cpuacct",
  [SR_CG_CPUSET] = "cpuset",   [SR_CG_MEMORY] = "memory",
  [SR_CG_DEVICES] = "devices", [SR_CG_FREEZER] = "freezer",
  [SR_CG_BLKIO] = "blkio",     [SR_CG_PIDS] = "pids",
  [SR_CG_HUGETLB] = "hugetlb", [SR_CG_NET_CLS] = "net_cls",
  [SR_CG_NET_PRIO] = "net_prio", [SR_CG_PERF_EVENT] = "perf_event",
  [SR_CG_RDMA] = "rdma",       [SR_CG_MISC] = "misc",
};

int
sr_cg_ctrl_from_name (const char *name)
{
  if (strcmp (name, "io") == 0)
    return SR_CG_BLKIO;
  for (int i = 0; i < SR_CG__COUNT; i++)
    if (strcmp (name, ctrl_names[i]) == 0)
      return i;
  return -1;
}

const char *
sr_cg_ctrl_name (enum sr_cg_ctrl c, bool v2)
{
  if (c == SR_CG_BLKIO && v2)
    return "io";
  return ctrl_names[c];
}

unsigned
sr_cg_ctrls_parse (const char *list, const char *seps, bool v2)
{
  unsigned bits = 0;
  _cleanup_free_ char *copy = xstrdup (list);
  char *save = NULL;
  for (char *t = strtok_r (copy, seps, &save); t != NULL;
       t = strtok_r (NULL, seps, &save))
    {
      int c = sr_cg_ctrl_from_name (t);
      /* v1 has no "io" and v2 no "blkio": do not mix them up. */
      if (c < 0 || (c == SR_CG_BLKIO && strcmp (t, v2 ? "io" : "blkio") != 0))
        continue;
      bits |= SR_CG_BIT (c);
    }
  return bits;
}

void
sr_cg_hier_clear (struct sr_cg_hier *h)
{
  free (h->key);
  free (h->mnt);
  free (h->own);
  free (h->path);
  sr_close (h->fd);
  *h = (struct sr_cg_hier){ .fd = -1 };
}

/* ---- /proc/self/mountinfo ---------------------------------------------- */

struct mount_entry
{
  char *root;
  char *point;
  bool v2;
  char *superopts;
};

/* A cgroup or cgroup2 line of mountinfo. */
static bool
parse_mount_line (char *line, struct mount_entry *m)
{
  struct sr_mountinfo mi;
  if (!sr_mountinfo_parse (line, &mi))
    return false;
  if (strcmp (mi.fstype, "cgroup") != 0 && strcmp (mi.fstype, "cgroup2") != 0)
    return false;
  m->root = mi.root;
  m->point = mi.point;
  m->v2 = strcmp (mi.fstype, "cgroup2") == 0;
  m->superopts = mi.superopts;
  return true;
}

static bool
mount_matches (const struct mount_entry *m, bool v2, const char *key)
{
  if (m->v2 != v2)
    return false;
  if (v2)
    return true;
  _cleanup_free_ char *copy = xstrdup (key);
  char *save = NULL;
  for (char *t = strtok_r (copy, ",", &save); t != NULL;
       t = strtok_r (NULL, ",", &save))
    if (!sr_mountinfo_has_opt (m->superopts, t))
      return false;
  return true;
}

/* The mount of a hierarchy; those under /sys/fs/cgroup win over others. */
static const struct mount_entry *
find_mount (const struct mount_entry *mounts, size_t n, bool v2,
            const char *key)
{
  const struct mount_entry *found = NULL;
  for (size_t i = 0; i < n; i++)
    {
      if (!mount_matches (&mounts[i], v2, key))
        continue;
      bool standard = str_has_prefix (mounts[i].point, CGROUP_ROOT "/")
                      || strcmp (mounts[i].point, CGROUP_ROOT) == 0;
      if (found == NULL || standard)
        found = &mounts[i];
      if (standard)
        break;
    }
  return found;
}

/* This process's cgroup as seen below a mount of the hierarchy's `root`. */
static char *
own_below_root (const char *own, const char *root)
{
  size_t rl = strlen (root);
  if (strcmp (root, "/") == 0 || !str_has_prefix (own, root))
    return xstrdup (own);
  if (own[rl] == '\0')
    return xstrdup ("/");
  if (own[rl] != '/')
    return xstrdup (own);
  return xstrdup (own + rl);
}

static size_t
parse_mounts (char *mountinfo, struct mount_entry **out)
{
  size_t n = 0;
  struct mount_entry *m = NULL;
  char *save = NULL;
  for (char *line = strtok_r (mountinfo, "\n", &save); line != NULL;
       line = strtok_r (NULL, "\n", &save))
    {
      struct mount_entry e;
      if (!parse_mount_line (line, &e))
        continue;
      m = xrealloc (m, (n + 1) * sizeof *m);
      m[n++] = e;
    }
  *out = m;
  return n;
}

/* ---- /proc/self/cgroup ------------------------------------------------- */

static void
add_hier (struct sr_cg_hier **h, size_t *n, const char *key, const char *mnt,
          bool v2, const char *own)
{
  *h = xrealloc (*h, (*n + 1) * sizeof **h);
  (*h)[*n] = (struct sr_cg_hier){
    .key = xstrdup (key),
    .mnt = xstrdup (mnt),
    .v2 = v2,
    .ctrls = v2 ? 0 : sr_cg_ctrls_parse (key, ",", false),
    .own = xstrdup (own),
    .fd = -1,
  };
  (*n)++;
}

static void
free_hiers (struct sr_cg_hier *h, size_t n)
{
  for (size_t i = 0; i < n; i++)
    sr_cg_hier_clear (&h[i]);
  free (h);
}

int
sr_cg_hier_parse (sr_cgroup_layout layout, const char *proc_cgroup,
                  const char *mountinfo, struct sr_cg_hier **out, size_t *n,
                  sr_error **err)
{
  _cleanup_free_ char *mi = mountinfo ? xstrdup (mountinfo) : NULL;
  _cleanup_free_ struct mount_entry *mounts = NULL;
  size_t nmounts = mi ? parse_mounts (mi, &mounts) : 0;
  _cleanup_free_ char *pc = xstrdup (proc_cgroup);
  struct sr_cg_hier *h = NULL;
  size_t nh = 0;

  char *save = NULL;
  for (char *line = strtok_r (pc, "\n", &save); line != NULL;
       line = strtok_r (NULL, "\n", &save))
    {
      char *c1 = strchr (line, ':');
      char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      if (c2 == NULL || c2[1] != '/')
        continue;
      *c1 = *c2 = '\0';
      const char *key = c1 + 1, *own = c2 + 1;
      bool v2 = strcmp (line, "0") == 0 && key[0] == '\0';
      if (v2 && layout == SR_CGROUP_V2)
        {
          add_hier (&h, &nh, "", CGROUP_ROOT, true, own);
          continue;
        }
      if (layout == SR_CGROUP_V2 || (v2 && layout != SR_CGROUP_HYBRID)
          || (!v2 && key[0] == '\0'))
        continue;
      const struct mount_entry *m = find_mount (mounts, nmounts, v2, key);
      if (m == NULL)
        continue; /* a hierarchy nobody mounted: nothing to use */
      _cleanup_free_ char *rel = own_below_root (own, m->root);
      add_hier (&h, &nh, key, m->point, v2, rel);
    }
  if (nh == 0)
    {
      free (h);
      return sr_fail (err, ENOENT, "cgroup: no usable cgroup hierarchy found");
    }
  *out = h;
  *n = nh;
  return 0;
}

static int
discover (sr_cgroup_layout layout, struct sr_cg_hier **out, size_t *n,
          sr_error **err)
{
  _cleanup_free_ char *pc = NULL, *mi = NULL;
  if (sr_read_file_at (AT_FDCWD, "/proc/self/cgroup", 1 << 20, &pc, NULL, err)
      < 0)
    return -1;
  if (layout != SR_CGROUP_V2
      && sr_read_file_at (AT_FDCWD, "/proc/self/mountinfo", 16 << 20, &mi,
                          NULL, err)
             < 0)
    return -1;

  struct sr_cg_hier *h = NULL;
  size_t nh = 0;
  if (sr_cg_hier_parse (layout, pc, mi, &h, &nh, err) < 0)
    return -1;
  for (size_t i = 0; i < nh; i++)
    {
      if (!h[i].v2)
        continue;
      _cleanup_free_ char *file = xasprintf ("%s/cgroup.controllers", h[i].mnt);
      _cleanup_free_ char *list = NULL;
      if (sr_read_file_at (AT_FDCWD, file, 4096, &list, NULL, err) < 0)
        {
          free_hiers (h, nh);
          return -1;
        }
      h[i].ctrls = sr_cg_ctrls_parse (list, " \n", true);
    }
  *out = h;
  *n = nh;
  return 0;
}

/* The host's hierarchies and this process's place in them do not change
 * while one command runs (sandrun never moves itself into a cgroup), yet a
 * `run` or a sandbox asks several times: the files are read once per
 * process and each caller gets its own copy. */
int
sr_cg_hier_discover (sr_cgroup_layout layout, struct sr_cg_hier **out,
                     size_t *n, sr_error **err)
{
  static struct sr_cg_hier *memo;
  static size_t memo_n;
  static sr_cgroup_layout memo_layout;

  if (memo == NULL || memo_layout != layout)
    {
      struct sr_cg_hier *h = NULL;
      size_t nh = 0;
      if (discover (layout, &h, &nh, err) < 0)
        return -1;
      if (memo != NULL)
        free_hiers (memo, memo_n);
      memo = h;
      memo_n = nh;
      memo_layout = layout;
    }
  struct sr_cg_hier *h = xcalloc (memo_n, sizeof *h);
  for (size_t i = 0; i < memo_n; i++)
    h[i] = (struct sr_cg_hier){
      .key = xstrdup (memo[i].key),
      .mnt = xstrdup (memo[i].mnt),
      .v2 = memo[i].v2,
      .ctrls = memo[i].ctrls,
      .own = xstrdup (memo[i].own),
      .fd = -1,
    };
  *out = h;
  *n = memo_n;
  return 0;
}

/* ---- lookups ----------------------------------------------------------- */

const char *
sr_cg_hier_name (const struct sr_cg_hier *h)
{
  return h->key[0] ? h->key : "unified";
}

struct sr_cg_hier *
sr_cg_find (const sr_cgroup *cg, enum sr_cg_ctrl c)
{
  for (size_t i = 0; i < cg->n; i++)
    if (cg->h[i].ctrls & SR_CG_BIT (c))
      return &cg->h[i];
  return NULL;
}

struct sr_cg_hier *
sr_cg_unified (const sr_cgroup *cg)
{
  for (size_t i = 0; i < cg->n; i++)
    if (cg->h[i].v2)
      return &cg->h[i];
  return NULL;
}

/* Every process of the container joins every hierarchy, so any would do;
 * cgroup2 comes first because cgroup.kill and the v2 freezer act on it. */
struct sr_cg_hier *
sr_cg_primary (const sr_cgroup *cg)
{
  struct sr_cg_hier *h = sr_cg_unified (cg);
  if (h == NULL)
    h = sr_cg_find (cg, SR_CG_FREEZER);
  if (h == NULL)
    h = sr_cg_find (cg, SR_CG_PIDS);
  return h != NULL ? h : &cg->h[0];
}
