/* Mount option parsing: flags, clears, propagation, recursive attributes,
 * filesystem data, idmap, refusals. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "core/mountopt.h"
#include "sandrun/util.h"
#include "unit.h"

static struct sr_mount_opts
parse (const char *const *opts, int *rc, sr_error **err)
{
  struct sr_mount_opts o;
  *rc = sr_mount_opts_parse ((char *const *) opts, &o, err);
  return o;
}

static void
test_flags (void)
{
  const char *v[] = { "nosuid", "nodev", "noexec", "ro", "sync", "dirsync",
                      "mand", "lazytime", "silent", "iversion", "nosymfollow",
                      NULL };
  int rc;
  struct sr_mount_opts o = parse (v, &rc, NULL);
  unsigned long want = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY
                       | MS_SYNCHRONOUS | MS_DIRSYNC | MS_MANDLOCK
                       | MS_LAZYTIME | MS_SILENT | MS_I_VERSION
                       | MS_NOSYMFOLLOW;
  CHECK (rc == 0 && o.flags == want, "per-mount and superblock flags set");
  CHECK (o.clear == 0 && o.data == NULL, "nothing cleared, no data");
  sr_mount_opts_clear (&o);

  const char *w[] = { "ro", "rw", "nosuid", "suid", "async", "sync", "loud",
                      "noiversion", "nolazytime", "nomand", "dev", "exec",
                      "symfollow", NULL };
  o = parse (w, &rc, NULL);
  CHECK (rc == 0 && o.flags == MS_SYNCHRONOUS, "the last of a pair wins");
  CHECK ((o.clear & (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
                     | MS_SILENT | MS_I_VERSION | MS_LAZYTIME | MS_MANDLOCK
                     | MS_NOSYMFOLLOW))
             == (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_SILENT
                 | MS_I_VERSION | MS_LAZYTIME | MS_MANDLOCK | MS_NOSYMFOLLOW),
         "rw, suid, dev, exec ... are explicit clears");
  CHECK (!(o.clear & MS_SYNCHRONOUS), "sync after async is not cleared");
  sr_mount_opts_clear (&o);
}

static void
test_bind_remount (void)
{
  const char *b[] = { "bind", NULL }, *r[] = { "rbind", "remount", NULL };
  int rc;
  struct sr_mount_opts o = parse (b, &rc, NULL);
  CHECK (o.flags == MS_BIND && sr_mount_opts_is_bind (&o, NULL), "bind");
  sr_mount_opts_clear (&o);
  o = parse (r, &rc, NULL);
  CHECK (o.flags == (MS_BIND | MS_REC | MS_REMOUNT), "rbind, remount");
  sr_mount_opts_clear (&o);
  o = parse (NULL, &rc, NULL);
  CHECK (rc == 0 && !sr_mount_opts_is_bind (&o, "tmpfs")
             && sr_mount_opts_is_bind (&o, "bind"),
         "type \"bind\" alone is a bind mount");
  sr_mount_opts_clear (&o);
}

static void
test_atime (void)
{
  const char *a[] = { "noatime", "strictatime", NULL };
  const char *b[] = { "strictatime", "relatime", "nodiratime", NULL };
  const char *c[] = { "atime", NULL };
  uint64_t set, clr;
  int rc;

  struct sr_mount_opts o = parse (a, &rc, NULL);
  CHECK (o.flags == MS_STRICTATIME, "atime modes exclude each other");
  sr_mount_opts_attr (&o, &set, &clr);
  CHECK (set == MOUNT_ATTR_STRICTATIME && clr == MOUNT_ATTR__ATIME,
         "strictatime as MOUNT_ATTR");
  sr_mount_opts_clear (&o);

  o = parse (b, &rc, NULL);
  sr_mount_opts_attr (&o, &set, &clr);
  CHECK (set == (MOUNT_ATTR_RELATIME | MOUNT_ATTR_NODIRATIME)
             && clr == MOUNT_ATTR__ATIME,
         "relatime, nodiratime as MOUNT_ATTR");
  sr_mount_opts_clear (&o);

  o = parse (c, &rc, NULL);
  sr_mount_opts_attr (&o, &set, &clr);
  CHECK (set == MOUNT_ATTR_RELATIME && clr == MOUNT_ATTR__ATIME,
         "atime alone goes back to the default, relatime");
  sr_mount_opts_clear (&o);

  o = parse (NULL, &rc, NULL);
  sr_mount_opts_attr (&o, &set, &clr);
  CHECK (set == 0 && clr == 0, "no option changes nothing");
  sr_mount_opts_clear (&o);
}

static void
test_attr (void)
{
  const char *v[] = { "ro", "nosuid", "dev", "exec", "rw", NULL };
  uint64_t set, clr;
  int rc;
  struct sr_mount_opts o = parse (v, &rc, NULL);
  sr_mount_opts_attr (&o, &set, &clr);
  CHECK (set == MOUNT_ATTR_NOSUID, "set attributes");
  CHECK (clr == (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC),
         "cleared attributes");
  sr_mount_opts_clear (&o);
}

static void
test_propagation (void)
{
  const char *v[] = { "rshared", "private", NULL };
  int rc;
  struct sr_mount_opts o = parse (v, &rc, NULL);
  CHECK (o.propagation == MS_PRIVATE && o.flags == 0, "last propagation wins");
  sr_mount_opts_clear (&o);
  CHECK (sr_propagation_parse ("rslave") == (MS_SLAVE | MS_REC), "rslave");
  CHECK (sr_propagation_parse ("unbindable") == MS_UNBINDABLE, "unbindable");
  CHECK (sr_propagation_parse ("runbindable") == (MS_UNBINDABLE | MS_REC),
         "runbindable");
  CHECK (sr_propagation_parse ("shared") == MS_SHARED, "shared");
  CHECK (sr_propagation_parse ("ro") == 0, "ro is not a propagation");
  CHECK (sr_propagation_parse ("bogus") == 0, "unknown name");
  CHECK (sr_propagation_parse (NULL) == 0, "NULL");
}

static void
test_recursive (void)
{
  const char *v[] = { "rro", "rnosuid", "rnodev", "rnoexec", "rnodiratime",
                      "rnosymfollow", "rnoatime", "rsuid", NULL };
  const char *w[] = { "rstrictatime", "rrelatime", "rrw", "rexec", NULL };
  int rc;
  struct sr_mount_opts o = parse (v, &rc, NULL);
  CHECK (o.flags == 0, "recursive attributes are not MS flags");
  CHECK (o.rec_set == (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC
                       | MOUNT_ATTR_NODIRATIME | MOUNT_ATTR_NOSYMFOLLOW
                       | MOUNT_ATTR_NOATIME),
         "recursive set");
  CHECK (o.rec_clr == (MOUNT_ATTR__ATIME | MOUNT_ATTR_NOSUID),
         "recursive clear, atime mode");
  sr_mount_opts_clear (&o);
  o = parse (w, &rc, NULL);
  CHECK (o.rec_set == MOUNT_ATTR_RELATIME
             && o.rec_clr == (MOUNT_ATTR__ATIME | MOUNT_ATTR_RDONLY
                              | MOUNT_ATTR_NOEXEC),
         "the last recursive atime mode wins; rrw and rexec clear");
  sr_mount_opts_clear (&o);
}

static void
test_data (void)
{
  const char *v[] = { "nosuid", "mode=755", "", "size=65536k", "newinstance",
                      "ptmxmode=0666", "defaults", NULL };
  int rc;
  struct sr_mount_opts o = parse (v, &rc, NULL);
  char *d = sr_mount_opts_data (&o);
  CHECK (rc == 0 && o.flags == MS_NOSUID, "flags beside data");
  CHECK_STR (d, "mode=755,size=65536k,newinstance,ptmxmode=0666",
             "data in order, empty and defaults dropped");
  free (d);
  sr_mount_opts_clear (&o);
  o = parse (NULL, &rc, NULL);
  CHECK (sr_mount_opts_data (&o) == NULL, "no data: NULL");
  sr_mount_opts_clear (&o);
}

static void
test_copyup (void)
{
  const char *v[] = { "tmpcopyup", "mode=755", NULL };
  int rc;
  struct sr_mount_opts o = parse (v, &rc, NULL);
  CHECK (rc == 0 && o.copyup && o.flags == 0, "tmpcopyup is not data");
  CHECK_STR (o.data ? o.data[0] : NULL, "mode=755", "data beside it");
  sr_mount_opts_clear (&o);
}

static void
test_idmap (void)
{
  const char *i[] = { "rbind", "idmap", "ro", NULL };
  const char *r[] = { "idmap", "ridmap", NULL };
  int rc;
  struct sr_mount_opts o = parse (i, &rc, NULL);
  CHECK (rc == 0 && o.idmap == SR_MOUNT_IDMAP
             && o.flags == (MS_BIND | MS_REC | MS_RDONLY) && o.data == NULL,
         "idmap: neither a flag nor data");
  sr_mount_opts_clear (&o);
  o = parse (r, &rc, NULL);
  CHECK (rc == 0 && o.idmap == SR_MOUNT_IDMAP_REC, "the last idmap wins");
  sr_mount_opts_clear (&o);
  o = parse (NULL, &rc, NULL);
  CHECK (o.idmap == 0, "no idmap by default");
  sr_mount_opts_clear (&o);

  sr_error *err = NULL;
  bool listed = true;
  sr_mount_force_legacy (true);
  o = parse (i, &rc, &err);
  for (size_t k = 0; sr_mount_opt_name (k, &listed) != NULL; k++)
    if (strcmp (sr_mount_opt_name (k, &listed), "idmap") == 0)
      break;
  CHECK (rc < 0 && err != NULL && !listed,
         "without mount_setattr, idmap is refused and not listed");
  if (err)
    printf ("#   %s\n", err->msg);
  sr_error_free (err);
  sr_mount_force_legacy (false);
}

static void
test_refused (void)
{
  const char *bad[][2] = { { "idmap=uids=0-1-10;gids=0-1-10", NULL },
                           { "ridmap=uids=0-1-10", NULL },
                           { "size=1,mode=7", NULL } };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    {
      sr_error *err = NULL;
      int rc;
      struct sr_mount_opts o = parse (bad[i], &rc, &err);
      CHECK (rc < 0 && err != NULL && o.data == NULL, "refused: %s", bad[i][0]);
      if (err)
        printf ("#   %s\n", err->msg);
      sr_error_free (err);
    }
}

int
main (void)
{
  test_flags ();
  test_bind_remount ();
  test_atime ();
  test_attr ();
  test_propagation ();
  test_recursive ();
  test_data ();
  test_copyup ();
  test_idmap ();
  test_refused ();
  return unit_finish ();
}
