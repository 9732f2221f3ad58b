#include "unit.h"

int
main (void)
{
  return unit_finish ();
}
