/* libFuzzer target: an HTTP request head (the first bytes of the proxy and transparent ports). */
#include <stddef.h>
#include <stdint.h>

#include "egress/parse.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct eg_http_req req;
  eg_http_sniff ((const char *) data, size);
  eg_http_parse ((const char *) data, size, &req);
  return 0;
}
