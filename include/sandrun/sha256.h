/* SHA-256 (FIPS 180-4), src/core/seccomp_sha256.c: the seccomp cache's key
 * and the hashes of the files a sandbox wrote. */
#ifndef SANDRUN_SHA256_H
#define SANDRUN_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct
{
  uint32_t h[8];
  uint64_t total; /* bytes hashed so far */
  uint8_t buf[64];
  size_t buf_len;
} sr_sha256_ctx;

void sr_sha256_init (sr_sha256_ctx *c);
void sr_sha256_update (sr_sha256_ctx *c, const void *data, size_t len);
void sr_sha256_final (sr_sha256_ctx *c, uint8_t out[32]);
void sr_sha256 (const void *data, size_t len, uint8_t out[32]);

#endif
