/* Idmapped mounts, the runtime's half (see idmap.h): user namespaces that
 * carry the mappings, and the detached idmapped clones of the bind sources
 * that the init attaches. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "core/idmap.h"
#include "util/procfs.h"
#include "core/rootfs.h"
#include "sandrun/util.h"

/* One mount's mappings: the mount's own or the container's. */
struct idmap_set
{
  const oci_id_mapping *uid;
  size_t uid_len;
  const oci_id_mapping *gid;
  size_t gid_len;
};

/* User namespaces made so far, one per distinct mapping. */
struct userns_cache
{
  struct idmap_set *sets;
  int *fds;
  size_t len;
};

static void
userns_cache_clear (struct userns_cache *c)
{
  for (size_t i = 0; i < c->len; i++)
    sr_close (c->fds[i]);
  free (c->sets);
  free (c->fds);
  memset (c, 0, sizeof *c);
}

bool
sr_idmap_mount_wanted (const oci_mount *m, const struct sr_mount_opts *o)
{
  return o->idmap != 0 || m->uid_mappings_len > 0 || m->gid_mappings_len > 0;
}

bool
sr_idmap_wanted (const oci_config *cfg)
{
  for (size_t i = 0; i < cfg->mounts_len; i++)
    {
      _cleanup_mount_opts_ struct sr_mount_opts o = { 0 };
      if (sr_mount_opts_parse (cfg->mounts[i].options, &o, NULL) < 0
          || sr_idmap_mount_wanted (&cfg->mounts[i], &o))
        return true;
    }
  return false;
}

bool
sr_idmap_available (void)
{
  /* MOUNT_ATTR_IDMAP came with mount_setattr (Linux 5.12). */
  return sr_mount_api_available ();
}

void
sr_mount_fds_close (struct sr_mount_fds *m)
{
  for (size_t i = 0; i < m->len; i++)
    sr_close (m->fds[i]);
  free (m->fds);
  memset (m, 0, sizeof *m);
}

/* ---- the user namespaces ------------------------------------------------- */

static bool
same_maps (const oci_id_mapping *a, size_t na, const oci_id_mapping *b,
           size_t nb)
{
  return na == nb && (na == 0 || memcmp (a, b, na * sizeof *a) == 0);
}

static bool
same_set (const struct idmap_set *a, const struct idmap_set *b)
{
  return same_maps (a->uid, a->uid_len, b->uid, b->uid_len)
         && same_maps (a->gid, a->gid_len, b->gid, b->gid_len);
}

/* The helper's user namespace, once its maps are written.  The helper is
 * alive (not yet reaped), so its pid names it. */
static int
open_helper_userns (pid_t pid, const struct idmap_set *s, sr_error **err)
{
  /* Read, not written, by sr_ns_write_id_maps. */
  oci_linux maps = { .uid_mappings = (oci_id_mapping *) s->uid,
                     .uid_mappings_len = s->uid_len,
                     .gid_mappings = (oci_id_mapping *) s->gid,
                     .gid_mappings_len = s->gid_len };
  _cleanup_free_ char *path = xasprintf ("%d/ns/user", (int) pid);
  _cleanup_close_ int fd = -1;
  int proc;

  if (sr_ns_write_id_maps (pid, &maps, err) < 0)
    return -1;
  proc = sr_procfs_root (err);
  if (proc < 0)
    return -1;
  fd = openat (proc, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ioctl (fd, NS_GET_NSTYPE) != CLONE_NEWUSER)
    return sr_fail (err, fd < 0 ? errno : EINVAL, "open the user namespace "
                    "of the mappings");
  return steal_fd (&fd);
}

/* A new user namespace with the mappings of `s`: a child unshares it and
 * waits on a pipe while its maps are written and the namespace opened; the
 * pipe's close lets it exit. */
static int
make_userns (const struct idmap_set *s, sr_error **err)
{
  int gate[2];
  int fd;
  pid_t pid;

  if (pipe2 (gate, O_CLOEXEC) < 0)
    return sr_fail (err, errno, "pipe");
  pid = (pid_t) syscall (SYS_clone, (unsigned long) (CLONE_NEWUSER | SIGCHLD),
                         NULL, NULL, NULL, 0);
  if (pid == 0)
    {
      char c;
      close (gate[1]);
      while (read (gate[0], &c, 1) < 0 && errno == EINTR)
        ;
      _exit (0);
    }
  close (gate[0]);
  if (pid < 0)
    {
      int saved = errno;
      close (gate[1]);
      return sr_fail (err, saved, "create a user namespace for the mappings");
    }
  fd = open_helper_userns (pid, s, err);
  close (gate[1]);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
  return fd;
}

/* The user namespace of `s` (borrowed from the cache). */
static int
userns_for (struct userns_cache *c, const struct idmap_set *s, sr_error **err)
{
  int fd;

  for (size_t i = 0; i < c->len; i++)
    if (same_set (&c->sets[i], s))
      return c->fds[i];
  fd = make_userns (s, err);
  if (fd < 0)
    return -1;
  c->sets = xrealloc (c->sets, (c->len + 1) * sizeof *c->sets);
  c->fds = xrealloc (c->fds, (c->len + 1) * sizeof *c->fds);
  c->sets[c->len] = *s;
  c->fds[c->len] = fd;
  c->len++;
  return fd;
}

/* ---- which mapping, which user namespace --------------------------------- */

/* The fd of the user namespace the container joins by path, or -1. */
static int
joined_userns (const oci_config *cfg, const struct sr_ns_plan *ns)
{
  const oci_linux *lx = cfg->linux_;
  for (size_t i = 0; lx != NULL && i < lx->namespaces_len && i < ns->join_len;
       i++)
    if (str_eq (lx->namespaces[i].type, "user") && ns->join_fds[i] >= 0)
      return ns->join_fds[i];
  return -1;
}

/* The user namespace whose mappings mount `m` gets (borrowed). */
static int
mount_userns (const oci_config *cfg, const struct sr_ns_plan *ns,
              const oci_mount *m, struct userns_cache *c, sr_error **err)
{
  const oci_linux *lx = cfg->linux_;
  struct idmap_set s = { m->uid_mappings, m->uid_mappings_len,
                         m->gid_mappings, m->gid_mappings_len };

  if (s.uid_len == 0 && s.gid_len == 0)
    {
      /* "idmap" alone: the container's user namespace's mappings. */
      int joined = joined_userns (cfg, ns);
      if (joined >= 0)
        return joined;
      if (!(ns->new_flags & CLONE_NEWUSER) || lx == NULL)
        return sr_fail (err, EINVAL, "idmap without uidMappings and "
                        "gidMappings needs a user namespace for the "
                        "container");
      s = (struct idmap_set) { lx->uid_mappings, lx->uid_mappings_len,
                               lx->gid_mappings, lx->gid_mappings_len };
    }
  if (s.uid_len == 0 || s.gid_len == 0)
    return sr_fail (err, EINVAL, "an idmapped mount needs both uidMappings "
                    "and gidMappings");
  return userns_for (c, &s, err);
}

/* ---- the mounts ---------------------------------------------------------- */

/* A detached clone of `src` (the whole tree with rbind), idmapped through
 * `userns` (every mount of it with ridmap).  A clone of a shared mount is
 * its peer: every mount of the tree first gets `prop`, the propagation of
 * the container's other binds (a slave of the host's mount by default), or
 * mounts made under it in the container would appear on the host. */
static int
idmapped_tree (const char *src, const struct sr_mount_opts *o,
               unsigned long prop, int userns, sr_error **err)
{
  unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC;
  struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP,
                          .userns_fd = (uint64_t) userns };
  _cleanup_close_ int fd = -1;

  if (o->flags & MS_REC)
    flags |= AT_RECURSIVE;
  fd = (int) syscall (SYS_open_tree, AT_FDCWD, src, flags);
  if (fd < 0)
    return sr_fail (err, errno, "source \"%s\"", src);
  if (sr_mount_setattr_fd (fd, 0, 0, true, prop | MS_REC, err) < 0)
    return sr_wrap (err, "source \"%s\"", src);
  if (syscall (SYS_mount_setattr, fd, "", AT_EMPTY_PATH
               | (o->idmap == SR_MOUNT_IDMAP_REC ? AT_RECURSIVE : 0),
               &a, sizeof a) < 0)
    return sr_fail (err, errno, "idmapped mount of \"%s\"", src);
  return steal_fd (&fd);
}

/* The detached idmapped mount of `m` in *fd, or -1 when `m` is not
 * idmapped. */
static int
open_one (const oci_config *cfg, const char *bundle,
          const struct sr_ns_plan *ns, const oci_mount *m,
          struct userns_cache *c, unsigned long prop, int *fd, sr_error **err)
{
  _cleanup_mount_opts_ struct sr_mount_opts o = { 0 };
  _cleanup_free_ char *src = NULL;
  int userns;

  *fd = -1;
  if (sr_mount_opts_parse (m->options, &o, err) < 0)
    return -1;
  if (!sr_idmap_mount_wanted (m, &o))
    return 0;
  if (!sr_mount_opts_is_bind (&o, m->type) || (o.flags & MS_REMOUNT))
    return sr_fail (err, EINVAL, "only bind mounts can be idmapped");
  if (!sr_idmap_available ())
    return sr_fail (err, ENOSYS, "idmapped mounts need mount_setattr "
                    "(Linux 5.12)");
  src = sr_bind_source (m, bundle, err);
  if (src == NULL)
    return -1;
  userns = mount_userns (cfg, ns, m, c, err);
  if (userns < 0)
    return -1;
  *fd = idmapped_tree (src, &o, prop, userns, err);
  return *fd < 0 ? -1 : 0;
}

int
sr_idmap_mounts_open (const oci_config *cfg, const char *bundle,
                      const struct sr_ns_plan *ns, struct sr_mount_fds *out,
                      sr_error **err)
{
  __attribute__ ((cleanup (userns_cache_clear))) struct userns_cache c = { 0 };
  unsigned long prop;

  if (sr_rootfs_mount_propagation (cfg, &prop, err) < 0)
    return -1;
  out->len = cfg->mounts_len;
  out->fds = xcalloc (out->len, sizeof (int));
  for (size_t i = 0; i < out->len; i++)
    out->fds[i] = -1;
  for (size_t i = 0; i < out->len; i++)
    {
      const oci_mount *m = &cfg->mounts[i];
      if (open_one (cfg, bundle, ns, m, &c, prop, &out->fds[i], err) < 0)
        {
          sr_mount_fds_close (out);
          return sr_wrap (err, "mount \"%s\"",
                          m->destination ? m->destination : "");
        }
    }
  return 0;
}
