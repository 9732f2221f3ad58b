/* A minimal TAP producer for the C unit tests: each CHECK is one test line;
 * the program exits non-zero when any failed. */
#ifndef SANDRUN_UNIT_H
#define SANDRUN_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_n, unit_failed;

/* `cond` is evaluated exactly once: it may have side effects. */
#define CHECK(cond, ...)                                                      \
  do                                                                          \
    {                                                                         \
      int pass_ = (cond) ? 1 : 0;                                             \
      unit_n++;                                                               \
      if (pass_)                                                              \
        printf ("ok %d - ", unit_n);                                          \
      else                                                                    \
        {                                                                     \
          unit_failed++;                                                      \
          printf ("not ok %d - ", unit_n);                                    \
        }                                                                     \
      printf (__VA_ARGS__);                                                   \
      if (!pass_)                                                             \
        printf (" (%s:%d: %s)", __FILE__, __LINE__, #cond);                   \
      printf ("\n");                                                          \
    }                                                                         \
  while (0)

#define CHECK_STR(got, want, ...)                                             \
  do                                                                          \
    {                                                                         \
      const char *g_ = (got), *w_ = (want);                                   \
      int ok_ = (g_ == NULL && w_ == NULL)                                    \
                || (g_ != NULL && w_ != NULL && strcmp (g_, w_) == 0);        \
      CHECK (ok_, __VA_ARGS__);                                               \
      if (!ok_)                                                               \
        printf ("#   got:  %s\n#   want: %s\n", g_ ? g_ : "(null)",          \
                w_ ? w_ : "(null)");                                          \
    }                                                                         \
  while (0)

static inline int
unit_finish (void)
{
  printf ("1..%d\n", unit_n);
  return unit_failed ? 1 : 0;
}

#endif
