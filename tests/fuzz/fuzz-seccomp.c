/* libFuzzer target: a lone linux.seccomp object. */
#include <stddef.h>
#include <stdint.h>

#include "oci-spec/oci-spec.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  sr_error *err = NULL;
  oci_seccomp_free (oci_seccomp_parse_data ((const char *) data, size, &err));
  sr_error_free (err);
  return 0;
}
