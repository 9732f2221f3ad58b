/* process.rlimits and process.oomScoreAdj, applied by the init to itself
 * while it is still root in the container's namespaces. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "core/process.h"
#include "util/procfs.h"
#include "sandrun/util.h"

struct rlimit_name
{
  const char *name;
  int resource;
};

static const struct rlimit_name rlimit_names[] = {
  { "RLIMIT_AS", RLIMIT_AS },
  { "RLIMIT_CORE", RLIMIT_CORE },
  { "RLIMIT_CPU", RLIMIT_CPU },
  { "RLIMIT_DATA", RLIMIT_DATA },
  { "RLIMIT_FSIZE", RLIMIT_FSIZE },
  { "RLIMIT_LOCKS", RLIMIT_LOCKS },
  { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
  { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
  { "RLIMIT_NICE", RLIMIT_NICE },
  { "RLIMIT_NOFILE", RLIMIT_NOFILE },
  { "RLIMIT_NPROC", RLIMIT_NPROC },
  { "RLIMIT_RSS", RLIMIT_RSS },
  { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
  { "RLIMIT_RTTIME", RLIMIT_RTTIME },
  { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
  { "RLIMIT_STACK", RLIMIT_STACK },
};

int
sr_rlimit_from_name (const char *name)
{
  if (name == NULL)
    return -1;
  for (size_t i = 0; i < ARRAY_SIZE (rlimit_names); i++)
    if (strcmp (rlimit_names[i].name, name) == 0)
      return rlimit_names[i].resource;
  return -1;
}

/* "unlimited" reads better than 18446744073709551615 in an error. */
static void
format_limit (char *buf, size_t len, uint64_t v)
{
  if (v == (uint64_t) RLIM_INFINITY)
    snprintf (buf, len, "unlimited");
  else
    snprintf (buf, len, "%" PRIu64, v);
}

static int
rlimit_fail (const oci_rlimit *l, int resource, int errnum, sr_error **err)
{
  char soft[32], hard[32], cur_hard[32];
  struct rlimit cur;

  format_limit (soft, sizeof soft, l->soft);
  format_limit (hard, sizeof hard, l->hard);
  /* Raising a hard limit needs CAP_SYS_RESOURCE, which the init may lack
   * (a user namespace, or a host whose root has it dropped): say so, the
   * bare EPERM is a puzzle otherwise. */
  if (errnum == EPERM && getrlimit (resource, &cur) == 0
      && l->hard > (uint64_t) cur.rlim_max)
    {
      format_limit (cur_hard, sizeof cur_hard, cur.rlim_max);
      sr_fail (err, 0,
               "setrlimit %s (soft %s, hard %s): %s (the hard limit is %s; "
               "raising it needs CAP_SYS_RESOURCE)",
               l->type, soft, hard, strerror (errnum), cur_hard);
      if (err != NULL && *err != NULL)
        (*err)->errnum = errnum;
      return -1;
    }
  return sr_fail (err, errnum, "setrlimit %s (soft %s, hard %s)", l->type, soft,
                  hard);
}

/* The resource of a valid entry, or -1. */
static int
rlimit_check (const oci_rlimit *l, sr_error **err)
{
  int resource = sr_rlimit_from_name (l->type);

  if (resource < 0)
    return sr_fail (err, 0, "rlimit \"%s\": unknown", l->type ? l->type : "");
  if (l->soft > l->hard)
    return sr_fail (err, EINVAL,
                    "rlimit %s: soft limit %" PRIu64
                    " is greater than hard limit %" PRIu64,
                    l->type, l->soft, l->hard);
  return resource;
}

int
sr_rlimits_apply (const oci_process *p, sr_error **err)
{
  if (p == NULL)
    return 0;
  /* Validate every entry first, so that a typo in the last one does not
   * leave the process with half of the limits applied. */
  for (size_t i = 0; i < p->rlimits_len; i++)
    if (rlimit_check (&p->rlimits[i], err) < 0)
      return -1;
  for (size_t i = 0; i < p->rlimits_len; i++)
    {
      const oci_rlimit *l = &p->rlimits[i];
      int resource = rlimit_check (l, err);
      struct rlimit r
          = { .rlim_cur = (rlim_t) l->soft, .rlim_max = (rlim_t) l->hard };

      if (setrlimit (resource, &r) < 0)
        return rlimit_fail (l, resource, errno, err);
    }
  return 0;
}

static int
current_oom_score_adj (long *out)
{
  _cleanup_free_ char *s = NULL;

  if (sr_procfs_read ("self/oom_score_adj", &s, NULL, NULL) < 0)
    return -1;
  s[strcspn (s, "\n")] = '\0';
  return sr_parse_long (s, out);
}

int
sr_oom_score_adj_apply (const oci_process *p, sr_error **err)
{
  char buf[16];
  int32_t v;

  if (p == NULL || !p->oom_score_adj.set)
    return 0;
  v = p->oom_score_adj.value;
  if (v < -1000 || v > 1000)
    return sr_fail (err, ERANGE,
                    "oomScoreAdj %" PRId32 " is outside -1000..1000", v);
  snprintf (buf, sizeof buf, "%" PRId32, v);
  if (sr_procfs_write ("self/oom_score_adj", buf, err) < 0)
    {
      long cur;
      if (err != NULL && *err != NULL && (*err)->errnum == EACCES
          && current_oom_score_adj (&cur) == 0 && v < cur)
        return sr_wrap (err,
                        "set oomScoreAdj to %" PRId32 " (below the current "
                        "%ld: that needs CAP_SYS_RESOURCE)",
                        v, cur);
      return sr_wrap (err, "set oomScoreAdj to %" PRId32, v);
    }
  return 0;
}
