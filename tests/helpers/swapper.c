/* swapper A B SECONDS: swap the directory entries A and B (say a directory
 * and a symlink) with renameat2(RENAME_EXCHANGE) as fast as possible for
 * SECONDS, to race a runtime that resolves a path through A.  Prints the
 * number of swaps.  Leaves A and B as they were when the count is even,
 * and swaps once more when it is odd. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  if (argc != 4)
    {
      fprintf (stderr, "usage: swapper A B SECONDS\n");
      return 2;
    }
  time_t end = time (NULL) + atoi (argv[3]);
  unsigned long n = 0;
  while (time (NULL) < end)
    for (int i = 0; i < 1000; i++)
      {
        if (renameat2 (AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) < 0)
          {
            fprintf (stderr, "swapper: renameat2 %s %s: %s\n", argv[1], argv[2], strerror (errno));
            return 1;
          }
        n++;
      }
  if (n % 2 && renameat2 (AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) == 0)
    n++;
  printf ("%lu\n", n);
  return 0;
}
