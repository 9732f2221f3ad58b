/* libFuzzer target: a TLS ClientHello, for its SNI. */
#include <stddef.h>
#include <stdint.h>

#include "egress/parse.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  char sni[EG_NAME_MAX + 1];
  eg_tls_sni (data, size, sni);
  return 0;
}
