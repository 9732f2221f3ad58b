/* Small helpers around yajl's generator, for the documents sandrun writes
 * itself (events, the config that update rewrites). */
#ifndef SANDRUN_JSONGEN_H
#define SANDRUN_JSONGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

/* A generator; `pretty` indents with tabs.  Aborts when out of memory. */
yajl_gen sr_json_gen_new (bool pretty);
void sr_json_gen_str (yajl_gen g, const char *s);
/* "key": value, where a NULL string is null. */
void sr_json_gen_key_str (yajl_gen g, const char *key, const char *value);
void sr_json_gen_key_int (yajl_gen g, const char *key, long long value);
/* The text generated (with a trailing newline when `newline`), malloc'd;
 * frees the generator. */
char *sr_json_gen_take (yajl_gen g, bool newline);
/* Write a parsed value as it is (the caller bounds its depth). */
void sr_json_gen_value (yajl_gen g, yajl_val v);
/* The length of the valid UTF-8 character at s (n bytes left), or 0; the
 * length of the longest prefix of s[0..len) that is whole UTF-8 characters
 * and at most max bytes. */
size_t sr_utf8_char (const unsigned char *s, size_t n);
size_t sr_utf8_prefix (const char *s, size_t len, size_t max);

#endif
