/* v1 -> v2 value conversions, all in one place.
 *
 * The OCI resources were designed for cgroup v1; on a v2 hierarchy they are
 * translated as runc and crun do, so that a config behaves the same under
 * every runtime:
 *
 *   cpu.shares [2, 262144], default 1024  ->  cpu.weight [1, 10000], default 100
 *       0 means unset.  The current runc/crun mapping (kubernetes#131216):
 *       l = log2(shares); weight = ceil(10 ^ ((l*l + 125*l) / 612 - 7/34)),
 *       a quadratic in log space that fits 2 -> 1, 1024 -> 100 and
 *       262144 -> 10000 (the older linear 1 + (shares-2)*9999/262142 put
 *       the default 1024 at 39, far below v2's default 100).
 *
 *   blkio.weight [10, 1000]  ->  io.bfq.weight [1, 1000]: the same value;
 *                             ->  io.weight [1, 10000] when bfq is absent:
 *       1 + (weight - 10) * 9999 / 990.
 *
 *   memory.swap (memory + swap, v1's memsw)  ->  memory.swap.max (swap only)
 *       = swap - limit;  -1 -> "max";  0 -> unset;  limit -1 with swap unset
 *       -> "max" (unlimited memory means unlimited swap, as on v1).  A swap
 *       limit needs a memory limit, and swap < limit is an error.
 *
 *   -1 ("unlimited" in the OCI config) -> "max" in every v2 limit file.
 *
 * docs/cgroups.md says the same for users. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>

#include "internal.h"
#include "sandrun/util.h"

#define SHARES_MIN 2
#define SHARES_MAX 262144
#define WEIGHT_MAX 10000

uint64_t
sr_cg_shares_to_weight (uint64_t shares)
{
  if (shares == 0)
    return 0;
  if (shares <= SHARES_MIN)
    return 1;
  if (shares >= SHARES_MAX)
    return WEIGHT_MAX;
  double l = log2 ((double) shares);
  double exponent = (l * l + 125 * l) / 612.0 - 7.0 / 34.0;
  return (uint64_t) ceil (pow (10, exponent));
}

uint64_t
sr_cg_blkio_weight_to_io_weight (uint64_t weight)
{
  if (weight == 0)
    return 0;
  if (weight < 10)
    weight = 10;
  return 1 + (weight - 10) * 9999 / 990;
}

int
sr_cg_swap_to_v2 (int64_t swap, int64_t limit, int64_t *out, sr_error **err)
{
  if (limit == -1 && swap == 0)
    {
      *out = -1;
      return 0;
    }
  if (swap == -1 || swap == 0)
    {
      *out = swap;
      return 0;
    }
  if (limit == 0 || limit == -1)
    return sr_fail (err, EINVAL,
                    "memory.swap %" PRId64 " needs a memory limit", swap);
  if (limit < 0 || swap < 0)
    return sr_fail (err, EINVAL, "invalid memory limit %" PRId64
                    " or swap %" PRId64, limit, swap);
  if (swap < limit)
    return sr_fail (err, EINVAL,
                    "memory.swap %" PRId64 " is below memory.limit %" PRId64
                    " (swap is memory plus swap)",
                    swap, limit);
  *out = swap - limit;
  return 0;
}

char *
sr_cg_v2_limit (int64_t value)
{
  return value < 0 ? xstrdup ("max") : xasprintf ("%" PRId64, value);
}
