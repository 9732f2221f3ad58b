/* linux.memoryPolicy: the NUMA policy of the container's processes, set by
 * the init on itself with set_mempolicy(2) (inherited across fork and
 * execve).  The names are checked here; the combinations (a node list with
 * MPOL_DEFAULT, MPOL_F_NUMA_BALANCING with a mode it does not go with, ...)
 * are the kernel's to judge, and its refusal is reported with the values. */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux_attrs_internal.h"
#include "sandrun/util.h"

#define NODE_POSSIBLE "/sys/devices/system/node/possible"

/* include/uapi/linux/mempolicy.h */
static const struct
{
  const char *name;
  int value;
} mpol_modes[] = {
  { "MPOL_DEFAULT", 0 },         { "MPOL_PREFERRED", 1 },
  { "MPOL_BIND", 2 },            { "MPOL_INTERLEAVE", 3 },
  { "MPOL_LOCAL", 4 },           { "MPOL_PREFERRED_MANY", 5 },
  { "MPOL_WEIGHTED_INTERLEAVE", 6 },
}, mpol_flags[] = {
  { "MPOL_F_NUMA_BALANCING", 1 << 13 },
  { "MPOL_F_RELATIVE_NODES", 1 << 14 },
  { "MPOL_F_STATIC_NODES", 1 << 15 },
};

const char *
sr_memory_policy_mode_name (size_t i)
{
  return i < ARRAY_SIZE (mpol_modes) ? mpol_modes[i].name : NULL;
}

const char *
sr_memory_policy_flag_name (size_t i)
{
  return i < ARRAY_SIZE (mpol_flags) ? mpol_flags[i].name : NULL;
}

/* Whether this kernel takes `mode` (a value of mpol_modes, maybe with
 * flags) for this thread, which then gets the default policy back.  A mode
 * newer than the kernel (MPOL_WEIGHTED_INTERLEAVE before 6.9) is EINVAL. */
static bool
kernel_takes (int mode)
{
  unsigned long node0 = 1;
  int base = mode & 0xff;
  /* DEFAULT and LOCAL take no node; the others node 0, which every NUMA
   * kernel has.  maxnode 2: the kernel reads one bit less. */
  bool none = base == 0 || base == 4;
  long r = syscall (SYS_set_mempolicy, mode, none ? NULL : &node0,
                    none ? 0UL : 2UL);

  (void) syscall (SYS_set_mempolicy, 0, NULL, 0UL);
  return r == 0;
}

bool
sr_memory_policy_mode_works (size_t i)
{
  return i < ARRAY_SIZE (mpol_modes) && kernel_takes (mpol_modes[i].value);
}

/* A flag with MPOL_BIND, which each of them goes with. */
bool
sr_memory_policy_flag_works (size_t i)
{
  return i < ARRAY_SIZE (mpol_flags)
         && kernel_takes (2 | mpol_flags[i].value);
}

/* mode | flags, the first argument of set_mempolicy. */
static int
policy_mode (const oci_memory_policy *mp, int *out, sr_error **err)
{
  size_t i;

  for (i = 0; i < ARRAY_SIZE (mpol_modes); i++)
    if (str_eq (mp->mode, mpol_modes[i].name))
      break;
  if (i == ARRAY_SIZE (mpol_modes))
    return sr_fail (err, 0, "linux.memoryPolicy.mode \"%s\" is unknown",
                    mp->mode ? mp->mode : "");
  *out = mpol_modes[i].value;
  for (size_t f = 0; mp->flags != NULL && mp->flags[f] != NULL; f++)
    {
      for (i = 0; i < ARRAY_SIZE (mpol_flags); i++)
        if (strcmp (mp->flags[f], mpol_flags[i].name) == 0)
          break;
      if (i == ARRAY_SIZE (mpol_flags))
        return sr_fail (err, 0,
                        "linux.memoryPolicy.flags: \"%s\" is "
                        "unknown",
                        mp->flags[f]);
      *out |= mpol_flags[i].value;
    }
  return 0;
}

static const char *
nodes_text (const oci_memory_policy *mp)
{
  return mp->nodes != NULL ? mp->nodes : "";
}

int
sr_memory_policy_check (const oci_memory_policy *mp, sr_error **err)
{
  _cleanup_idset_ struct sr_idset set = { 0 };
  _cleanup_free_ char *possible = NULL;
  unsigned long limit = 1;
  int mode = 0;

  if (mp == NULL)
    return 0;
  if (policy_mode (mp, &mode, err) < 0)
    return -1;
  /* Without NUMA there is no list: only node 0 exists. */
  if (access (NODE_POSSIBLE, F_OK) == 0
      && sr_idset_host_limit (NODE_POSSIBLE, &limit, &possible, err) < 0)
    return sr_wrap (err, "linux.memoryPolicy");
  return sr_idset_parse (nodes_text (mp), limit, possible ? possible : "0",
                         "linux.memoryPolicy.nodes", "node", &set, err);
}

int
sr_memory_policy_apply (const oci_memory_policy *mp, sr_error **err)
{
  _cleanup_idset_ struct sr_idset set = { 0 };
  int mode = 0;

  if (mp == NULL)
    return 0;
  if (policy_mode (mp, &mode, err) < 0
      || sr_idset_parse (nodes_text (mp), SR_IDSET_MAX, NULL,
                         "linux.memoryPolicy.nodes", "node", &set, err)
             < 0)
    return -1;
  /* maxnode counts one bit more than the kernel reads (it decrements it). */
  if (syscall (SYS_set_mempolicy, mode, set.bits,
               set.count > 0 ? set.high + 1 : 0UL)
      < 0)
    return sr_fail (err, errno,
                    "linux.memoryPolicy: set_mempolicy %s nodes "
                    "\"%s\"",
                    mp->mode, nodes_text (mp));
  return 0;
}
