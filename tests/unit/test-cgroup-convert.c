/* v1 -> v2 value conversions (src/core/cgroup/convert.c). */
#include <stdlib.h>

#include "../../src/core/cgroup/internal.h"
#include "sandrun/util.h"
#include "unit.h"

static void
test_shares (void)
{
  /* The fitted points, and values cross-checked with runc >= 1.3. */
  struct { uint64_t shares, weight; } cases[] = {
    { 0, 0 },     { 1, 1 },     { 2, 1 },      { 3, 2 },
    { 100, 17 },  { 512, 59 },  { 1024, 100 }, { 2048, 174 },
    { 262143, 10000 }, { 262144, 10000 }, { 1000000, 10000 },
  };
  for (size_t i = 0; i < ARRAY_SIZE (cases); i++)
    CHECK (sr_cg_shares_to_weight (cases[i].shares) == cases[i].weight,
           "cpu.shares %llu -> cpu.weight %llu (got %llu)",
           (unsigned long long) cases[i].shares,
           (unsigned long long) cases[i].weight,
           (unsigned long long) sr_cg_shares_to_weight (cases[i].shares));
}

static void
test_blkio (void)
{
  CHECK (sr_cg_blkio_weight_to_io_weight (0) == 0, "blkio weight 0 is unset");
  CHECK (sr_cg_blkio_weight_to_io_weight (10) == 1, "blkio 10 -> io 1");
  CHECK (sr_cg_blkio_weight_to_io_weight (500) == 4950, "blkio 500 -> io 4950");
  CHECK (sr_cg_blkio_weight_to_io_weight (1000) == 10000, "blkio 1000 -> io 10000");
}

static void
test_swap (void)
{
  struct { int64_t swap, limit, want; } ok[] = {
    { 0, -1, -1 },        /* unlimited memory: unlimited swap */
    { -1, 100, -1 },      { 0, 100, 0 },
    { 300, 100, 200 },    { 100, 100, 0 },
  };
  for (size_t i = 0; i < ARRAY_SIZE (ok); i++)
    {
      int64_t out = 42;
      sr_error *err = NULL;
      int r = sr_cg_swap_to_v2 (ok[i].swap, ok[i].limit, &out, &err);
      CHECK (r == 0 && out == ok[i].want, "swap %lld limit %lld -> %lld",
             (long long) ok[i].swap, (long long) ok[i].limit,
             (long long) ok[i].want);
      sr_error_free (err);
    }
  struct { int64_t swap, limit; } bad[] = { { 100, 0 }, { 100, -1 }, { 50, 100 }, { 100, -5 } };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    {
      int64_t out;
      sr_error *err = NULL;
      CHECK (sr_cg_swap_to_v2 (bad[i].swap, bad[i].limit, &out, &err) < 0
                 && err != NULL,
             "refuse swap %lld with limit %lld", (long long) bad[i].swap,
             (long long) bad[i].limit);
      sr_error_free (err);
    }
}

static void
test_limit (void)
{
  _cleanup_free_ char *a = sr_cg_v2_limit (-1);
  _cleanup_free_ char *b = sr_cg_v2_limit (1048576);
  CHECK_STR (a, "max", "-1 is max");
  CHECK_STR (b, "1048576", "numbers as is");
}

int
main (void)
{
  test_shares ();
  test_blkio ();
  test_swap ();
  test_limit ();
  return unit_finish ();
}
