/* Mount options: the table of mount(8) and runtime-spec names, and their
 * translation to MS_* and MOUNT_ATTR_* (see mountopt.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "core/mountopt.h"
#include "sandrun/util.h"

/* ---- the option table ---------------------------------------------------- */

enum opt_kind
{
  OPT_NOOP,
  OPT_SET,       /* MS_* flag set */
  OPT_CLEAR,     /* MS_* flag cleared */
  OPT_PROPAGATE, /* propagation type */
  OPT_REC_SET,   /* MOUNT_ATTR_* set recursively */
  OPT_REC_CLR,   /* MOUNT_ATTR_* cleared recursively */
  OPT_REC_ATIME, /* recursive atime mode (an enum in MOUNT_ATTR__ATIME) */
  OPT_COPYUP,
  OPT_IDMAP,     /* SR_MOUNT_IDMAP or SR_MOUNT_IDMAP_REC */
};

struct opt
{
  const char *name;
  enum opt_kind kind;
  unsigned long value;
};

#define ATIME_FLAGS (MS_NOATIME | MS_RELATIME | MS_STRICTATIME)

static const struct opt opt_table[] = {
  { "defaults", OPT_NOOP, 0 },
  { "ro", OPT_SET, MS_RDONLY },
  { "rw", OPT_CLEAR, MS_RDONLY },
  { "nosuid", OPT_SET, MS_NOSUID },
  { "suid", OPT_CLEAR, MS_NOSUID },
  { "nodev", OPT_SET, MS_NODEV },
  { "dev", OPT_CLEAR, MS_NODEV },
  { "noexec", OPT_SET, MS_NOEXEC },
  { "exec", OPT_CLEAR, MS_NOEXEC },
  { "sync", OPT_SET, MS_SYNCHRONOUS },
  { "async", OPT_CLEAR, MS_SYNCHRONOUS },
  { "dirsync", OPT_SET, MS_DIRSYNC },
  { "remount", OPT_SET, MS_REMOUNT },
  { "mand", OPT_SET, MS_MANDLOCK },
  { "nomand", OPT_CLEAR, MS_MANDLOCK },
  { "atime", OPT_CLEAR, MS_NOATIME },
  { "noatime", OPT_SET, MS_NOATIME },
  { "relatime", OPT_SET, MS_RELATIME },
  { "norelatime", OPT_CLEAR, MS_RELATIME },
  { "strictatime", OPT_SET, MS_STRICTATIME },
  { "nostrictatime", OPT_CLEAR, MS_STRICTATIME },
  { "diratime", OPT_CLEAR, MS_NODIRATIME },
  { "nodiratime", OPT_SET, MS_NODIRATIME },
  { "lazytime", OPT_SET, MS_LAZYTIME },
  { "nolazytime", OPT_CLEAR, MS_LAZYTIME },
  { "silent", OPT_SET, MS_SILENT },
  { "loud", OPT_CLEAR, MS_SILENT },
  { "iversion", OPT_SET, MS_I_VERSION },
  { "noiversion", OPT_CLEAR, MS_I_VERSION },
  { "nosymfollow", OPT_SET, MS_NOSYMFOLLOW },
  { "symfollow", OPT_CLEAR, MS_NOSYMFOLLOW },
  { "bind", OPT_SET, MS_BIND },
  { "rbind", OPT_SET, MS_BIND | MS_REC },
  { "private", OPT_PROPAGATE, MS_PRIVATE },
  { "rprivate", OPT_PROPAGATE, MS_PRIVATE | MS_REC },
  { "shared", OPT_PROPAGATE, MS_SHARED },
  { "rshared", OPT_PROPAGATE, MS_SHARED | MS_REC },
  { "slave", OPT_PROPAGATE, MS_SLAVE },
  { "rslave", OPT_PROPAGATE, MS_SLAVE | MS_REC },
  { "unbindable", OPT_PROPAGATE, MS_UNBINDABLE },
  { "runbindable", OPT_PROPAGATE, MS_UNBINDABLE | MS_REC },
  { "rro", OPT_REC_SET, MOUNT_ATTR_RDONLY },
  { "rrw", OPT_REC_CLR, MOUNT_ATTR_RDONLY },
  { "rnosuid", OPT_REC_SET, MOUNT_ATTR_NOSUID },
  { "rsuid", OPT_REC_CLR, MOUNT_ATTR_NOSUID },
  { "rnodev", OPT_REC_SET, MOUNT_ATTR_NODEV },
  { "rdev", OPT_REC_CLR, MOUNT_ATTR_NODEV },
  { "rnoexec", OPT_REC_SET, MOUNT_ATTR_NOEXEC },
  { "rexec", OPT_REC_CLR, MOUNT_ATTR_NOEXEC },
  { "rnodiratime", OPT_REC_SET, MOUNT_ATTR_NODIRATIME },
  { "rdiratime", OPT_REC_CLR, MOUNT_ATTR_NODIRATIME },
  { "rnosymfollow", OPT_REC_SET, MOUNT_ATTR_NOSYMFOLLOW },
  { "rsymfollow", OPT_REC_CLR, MOUNT_ATTR_NOSYMFOLLOW },
  /* atime is one mode, not bits: the "not X" forms fall back to the kernel
   * default, relatime. */
  { "rnoatime", OPT_REC_ATIME, MOUNT_ATTR_NOATIME },
  { "rstrictatime", OPT_REC_ATIME, MOUNT_ATTR_STRICTATIME },
  { "rrelatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME },
  { "ratime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME },
  { "rnorelatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME },
  { "rnostrictatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME },
  { "tmpcopyup", OPT_COPYUP, 0 },
  { "idmap", OPT_IDMAP, SR_MOUNT_IDMAP },
  { "ridmap", OPT_IDMAP, SR_MOUNT_IDMAP_REC },
};

/* Whether this kernel can do what the option asks: MOUNT_ATTR_IDMAP came
 * with mount_setattr. */
static bool
opt_supported (const struct opt *d)
{
  return d->kind != OPT_IDMAP || sr_mount_api_available ();
}

const char *
sr_mount_opt_name (size_t i, bool *supported)
{
  if (i >= ARRAY_SIZE (opt_table))
    return NULL;
  *supported = opt_supported (&opt_table[i]);
  return opt_table[i].name;
}

static const struct opt *
opt_lookup (const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE (opt_table); i++)
    if (strcmp (opt_table[i].name, name) == 0)
      return &opt_table[i];
  return NULL;
}

static void
opt_set_flag (struct sr_mount_opts *o, unsigned long f)
{
  /* The atime modes exclude each other: the last one named wins. */
  if (f & ATIME_FLAGS)
    o->flags &= ~ATIME_FLAGS;
  o->flags |= f;
  o->clear &= ~f;
}

static void
opt_apply (struct sr_mount_opts *o, const struct opt *d)
{
  switch (d->kind)
    {
    case OPT_NOOP:
      break;
    case OPT_SET:
      opt_set_flag (o, d->value);
      break;
    case OPT_CLEAR:
      o->flags &= ~d->value;
      o->clear |= d->value;
      break;
    case OPT_PROPAGATE:
      o->propagation = d->value;
      break;
    case OPT_REC_SET:
      o->rec_set |= d->value;
      o->rec_clr &= ~d->value;
      break;
    case OPT_REC_CLR:
      o->rec_clr |= d->value;
      o->rec_set &= ~d->value;
      break;
    case OPT_REC_ATIME:
      o->rec_clr |= MOUNT_ATTR__ATIME;
      o->rec_set = (o->rec_set & ~(uint64_t) MOUNT_ATTR__ATIME) | d->value;
      break;
    case OPT_COPYUP:
      o->copyup = true;
      break;
    case OPT_IDMAP:
      o->idmap = (int) d->value;
      break;
    }
}

int
sr_mount_opts_parse (char *const *options, struct sr_mount_opts *out,
                     sr_error **err)
{
  memset (out, 0, sizeof *out);
  for (size_t i = 0; options != NULL && options[i] != NULL; i++)
    {
      const char *name = options[i];
      const struct opt *d;

      if (*name == '\0')
        continue;
      d = opt_lookup (name);
      if (d == NULL)
        {
          if (strchr (name, ',') != NULL)
            {
              sr_mount_opts_clear (out);
              return sr_fail (err, EINVAL, "mount option \"%s\": a comma "
                              "inside one option", name);
            }
          /* crun's own syntax: passed on as data, a bind would silently
             lose the mapping. */
          if (str_has_prefix (name, "idmap=") || str_has_prefix (name, "ridmap="))
            {
              sr_mount_opts_clear (out);
              return sr_fail (err, EINVAL, "mount option \"%s\": mappings "
                              "go in the mount's uidMappings and gidMappings",
                              name);
            }
          strv_append (&out->data, name);
          continue;
        }
      if (!opt_supported (d))
        {
          sr_mount_opts_clear (out);
          return sr_fail (err, ENOTSUP, "mount option \"%s\": idmapped "
                          "mounts need mount_setattr (Linux 5.12)", name);
        }
      opt_apply (out, d);
    }
  return 0;
}

void
sr_mount_opts_clear (struct sr_mount_opts *o)
{
  strv_free (o->data);
  memset (o, 0, sizeof *o);
}

bool
sr_mount_opts_is_bind (const struct sr_mount_opts *o, const char *type)
{
  return (o->flags & MS_BIND) || str_eq (type, "bind");
}

char *
sr_mount_opts_data (const struct sr_mount_opts *o)
{
  size_t len = 0;
  char *s, *p;

  if (o->data == NULL || o->data[0] == NULL)
    return NULL;
  for (size_t i = 0; o->data[i]; i++)
    len += strlen (o->data[i]) + 1;
  p = s = xmalloc (len);
  for (size_t i = 0; o->data[i]; i++)
    {
      size_t n = strlen (o->data[i]);
      if (i > 0)
        *p++ = ',';
      memcpy (p, o->data[i], n);
      p += n;
    }
  *p = '\0';
  return s;
}

unsigned long
sr_propagation_parse (const char *name)
{
  const struct opt *d = name ? opt_lookup (name) : NULL;
  return (d != NULL && d->kind == OPT_PROPAGATE) ? d->value : 0;
}

/* MS_* flag ↔ MOUNT_ATTR_* bit, for the per-mount flags that have one. */
static const struct
{
  unsigned long ms;
  uint64_t attr;
} attr_map[] = {
  { MS_RDONLY, MOUNT_ATTR_RDONLY },       { MS_NOSUID, MOUNT_ATTR_NOSUID },
  { MS_NODEV, MOUNT_ATTR_NODEV },         { MS_NOEXEC, MOUNT_ATTR_NOEXEC },
  { MS_NODIRATIME, MOUNT_ATTR_NODIRATIME },
  { MS_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW },
};

void
sr_mount_opts_attr (const struct sr_mount_opts *o, uint64_t *set,
                    uint64_t *clr)
{
  *set = *clr = 0;
  for (size_t i = 0; i < ARRAY_SIZE (attr_map); i++)
    {
      if (o->flags & attr_map[i].ms)
        *set |= attr_map[i].attr;
      else if (o->clear & attr_map[i].ms)
        *clr |= attr_map[i].attr;
    }
  if ((o->flags | o->clear) & ATIME_FLAGS)
    {
      *clr |= MOUNT_ATTR__ATIME;
      if (o->flags & MS_STRICTATIME)
        *set |= MOUNT_ATTR_STRICTATIME;
      else if (o->flags & MS_NOATIME)
        *set |= MOUNT_ATTR_NOATIME;
      else
        *set |= MOUNT_ATTR_RELATIME;
    }
}

unsigned long
sr_mount_attr_to_ms (unsigned long flags, uint64_t set, uint64_t clr)
{
  flags &= MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME
           | MS_NODIRATIME | MS_RELATIME | MS_NOSYMFOLLOW;
  for (size_t i = 0; i < ARRAY_SIZE (attr_map); i++)
    {
      if (set & attr_map[i].attr)
        flags |= attr_map[i].ms;
      if (clr & attr_map[i].attr)
        flags &= ~attr_map[i].ms;
    }
  if (clr & MOUNT_ATTR__ATIME)
    {
      flags &= ~(unsigned long) ATIME_FLAGS;
      if ((set & MOUNT_ATTR__ATIME) == MOUNT_ATTR_NOATIME)
        flags |= MS_NOATIME;
      else if ((set & MOUNT_ATTR__ATIME) == MOUNT_ATTR_STRICTATIME)
        flags |= MS_STRICTATIME;
      else
        flags |= MS_RELATIME;
    }
  return flags;
}
