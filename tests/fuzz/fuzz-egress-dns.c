/* libFuzzer target: a DNS query, and the stub reply built from it. */
#include <stddef.h>
#include <stdint.h>

#include "egress/parse.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct eg_dns_query q;
  if (eg_dns_parse_query (data, size, &q) == EG_PARSE_DONE)
    {
      static uint8_t out[512];
      struct eg_addr a = { .family = AF_INET, .bytes = { 192, 0, 2, 7 } };
      eg_dns_reply (data, &q, 0, &a, 1, out, sizeof out);
    }
  return 0;
}
