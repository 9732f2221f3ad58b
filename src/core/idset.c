/* "0-3,7" lists of CPUs and NUMA nodes (execCPUAffinity, memoryPolicy):
 * parsed strictly into the bitmask the kernel takes.  The text comes from
 * an untrusted config: no strtoul leniency (spaces, signs, "0x"), and the
 * mask never grows past the limit. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "linux_attrs_internal.h"
#include "sandrun/util.h"

#define WORD_BITS (sizeof (unsigned long) * CHAR_BIT)

/* Decimal digits only, at least one, no overflow past `limit`'s range.
 * Returns the text after the number, NULL when there is none. */
static const char *
parse_id (const char *s, unsigned long *out)
{
  unsigned long n = 0;
  const char *p = s;

  for (; *p >= '0' && *p <= '9'; p++)
    {
      if (n > (ULONG_MAX - 9) / 10)
        n = ULONG_MAX; /* saturate: surely beyond any limit */
      else
        n = n * 10 + (unsigned long) (*p - '0');
    }
  if (p == s)
    return NULL;
  *out = n;
  return p;
}

static void
idset_add_range (struct sr_idset *set, unsigned long lo, unsigned long hi)
{
  size_t need = hi / WORD_BITS + 1;

  if (need > set->nwords)
    {
      set->bits = xrealloc (set->bits, need * sizeof (unsigned long));
      memset (set->bits + set->nwords, 0,
              (need - set->nwords) * sizeof (unsigned long));
      set->nwords = need;
    }
  for (unsigned long id = lo; id <= hi; id++)
    if (!sr_idset_has (set, id))
      {
        set->bits[id / WORD_BITS] |= 1UL << (id % WORD_BITS);
        set->count++;
      }
  if (hi + 1 > set->high)
    set->high = hi + 1;
}

static int
idset_fail (const char *what, const char *s, const char *why, sr_error **err)
{
  return sr_fail (err, 0, "%s: invalid list \"%s\": %s", what, s, why);
}

static int
idset_check_id (unsigned long id, unsigned long limit, const char *limit_text,
                const char *what, const char *kind, sr_error **err)
{
  if (id < limit)
    return 0;
  if (limit_text != NULL)
    return sr_fail (err, 0, "%s: %s %lu does not exist on this host (%s)",
                    what, kind, id, limit_text);
  return sr_fail (err, 0, "%s: %s %lu is out of range", what, kind, id);
}

int
sr_idset_parse (const char *s, unsigned long limit, const char *limit_text,
                const char *what, const char *kind, struct sr_idset *out,
                sr_error **err)
{
  _cleanup_idset_ struct sr_idset set = { 0 };
  const char *p = s;

  memset (out, 0, sizeof *out);
  if (limit > SR_IDSET_MAX)
    limit = SR_IDSET_MAX;
  while (*p != '\0')
    {
      unsigned long lo, hi;

      p = parse_id (p, &lo);
      if (p == NULL)
        return idset_fail (what, s, "expected a number", err);
      hi = lo;
      if (*p == '-' && (p = parse_id (p + 1, &hi)) == NULL)
        return idset_fail (what, s, "expected a number after '-'", err);
      if (hi < lo)
        return idset_fail (what, s, "a range goes downwards", err);
      if (idset_check_id (hi, limit, limit_text, what, kind, err) < 0)
        return -1;
      idset_add_range (&set, lo, hi);
      if (*p == ',' && p[1] == '\0')
        return idset_fail (what, s, "a trailing comma", err);
      if (*p != ',' && *p != '\0')
        return idset_fail (what, s, "expected ',' or '-'", err);
      if (*p == ',')
        p++;
    }
  *out = set;
  memset (&set, 0, sizeof set);
  return 0;
}

void
sr_idset_clear (struct sr_idset *set)
{
  free (set->bits);
  memset (set, 0, sizeof *set);
}

bool
sr_idset_has (const struct sr_idset *set, unsigned long id)
{
  return id / WORD_BITS < set->nwords
         && (set->bits[id / WORD_BITS] & (1UL << (id % WORD_BITS))) != 0;
}

int
sr_idset_host_limit (const char *sysfs_path, unsigned long *limit, char **text,
                     sr_error **err)
{
  _cleanup_free_ char *data = NULL;
  _cleanup_idset_ struct sr_idset set = { 0 };

  if (sr_read_file_at (AT_FDCWD, sysfs_path, 4096, &data, NULL, err) < 0)
    return -1;
  data[strcspn (data, "\n")] = '\0';
  if (sr_idset_parse (data, SR_IDSET_MAX, NULL, sysfs_path, "id", &set, err)
      < 0)
    return -1;
  *limit = set.high;
  *text = steal_pointer (&data);
  return 0;
}
