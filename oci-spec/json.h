/* The engine behind the oci-spec parsers: a document is checked and turned
 * into a yajl tree, then walked against static descriptions of the C structs
 * (oj_type), which also drive the free functions.  One description per struct
 * means a field cannot be parsed and then forgotten by the freer. */
#ifndef OCI_SPEC_JSON_H
#define OCI_SPEC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "sandrun/error.h"

/* Deeper documents are refused before a tree is built: yajl_tree_free
 * recurses, and no OCI document legitimately nests this deep. */
#define OJ_MAX_DEPTH 64

/* Where a value sits in the document, for error messages.  A chain of these
 * lives on the C stack while walking; the text is only built on failure. */
typedef enum
{
  OJ_SEG_FIELD, /* .name */
  OJ_SEG_INDEX, /* [index] */
  OJ_SEG_KEY,   /* .key or ["key"]: a key chosen by the document */
} oj_seg_kind;

typedef struct oj_path
{
  const struct oj_path *parent;
  oj_seg_kind kind;
  const char *name;
  size_t index;
} oj_path;

#define OJ_FIELD_PATH(p, n) ((oj_path){ .parent = (p), .kind = OJ_SEG_FIELD, .name = (n) })
#define OJ_INDEX_PATH(p, i) ((oj_path){ .parent = (p), .kind = OJ_SEG_INDEX, .index = (i) })
#define OJ_KEY_PATH(p, k) ((oj_path){ .parent = (p), .kind = OJ_SEG_KEY, .name = (k) })

typedef enum
{
  OJ_STR,      /* char * */
  OJ_STRV,     /* char **, NULL-terminated */
  OJ_BOOL,     /* bool */
  OJ_I32,      /* int32_t */
  OJ_U32,      /* uint32_t (.max narrows the range) */
  OJ_I64,      /* int64_t */
  OJ_U64,      /* uint64_t */
  OJ_OPT_BOOL, /* oci_opt_bool */
  OJ_OPT_I32,  /* oci_opt_i32 */
  OJ_OPT_U32,  /* oci_opt_u32 (.max narrows the range) */
  OJ_OPT_I64,  /* oci_opt_i64 */
  OJ_OPT_U64,  /* oci_opt_u64 */
  OJ_U32V,     /* uint32_t * with a size_t count at .len_offset */
  OJ_MAP,      /* oci_map: an object of strings */
  OJ_OBJ,      /* pointer to a struct described by .sub */
  OJ_INLINE,   /* struct described by .sub, embedded at .offset */
  OJ_ARRAY,    /* array of .sub structs, count at .len_offset */
  OJ_KEYED,    /* object of .sub objects, stored as an array: the key goes
                  to .sub->key_offset, count at .len_offset */
} oj_kind;

typedef struct oj_type oj_type;

typedef struct
{
  const char *name; /* JSON field name; NULL ends a table */
  oj_kind kind;
  size_t offset;
  size_t len_offset;
  bool required;
  uint64_t max; /* unsigned kinds: 0 means the storage type's maximum */
  const oj_type *sub;
} oj_field;

struct oj_type
{
  size_t size;
  const oj_field *fields;
  bool keyed; /* elements of an OJ_KEYED field: a char * key at key_offset */
  size_t key_offset;
  /* Extra validation once all fields are parsed; NULL when none. */
  int (*check) (const void *obj, const oj_path *path, sr_error **err);
};

/* The member at byte offset `off` of the struct at `base`. */
#define OJ_AT(base, off) ((void *) ((char *) (base) + (off)))

/* Table entry helpers.  T is the C struct, m its member. */
#define OJ_F(T, json, k, m, ...)                                              \
  { .name = (json), .kind = (k), .offset = offsetof (T, m), __VA_ARGS__ }
#define OJ_LIST(T, json, k, m, lenm, subtype, ...)                            \
  { .name = (json), .kind = (k), .offset = offsetof (T, m),                   \
    .len_offset = offsetof (T, lenm), .sub = &(subtype), __VA_ARGS__ }
#define OJ_SUB(T, json, k, m, subtype, ...)                                   \
  { .name = (json), .kind = (k), .offset = offsetof (T, m),                   \
    .sub = &(subtype), __VA_ARGS__ }
#define OJ_END { .name = NULL }

/* Fail with "PATH: MESSAGE" (just MESSAGE at the top level).  Returns -1. */
int oj_fail (const oj_path *path, sr_error **err, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* A copy of document text fit for a one-line message: at most 64 bytes
 * (then "..."), control characters, quotes and backslashes as \xNN. */
char *oj_escape (const char *s);

/* Parse a whole document: size limit, strict JSON, depth limit, no NUL
 * characters in strings.  The result is freed with yajl_tree_free. */
yajl_val oj_parse_document (const char *data, size_t len, sr_error **err);

/* The value of `key` in object `obj` (the last one when repeated, like Go),
 * NULL when absent or JSON null. */
yajl_val oj_member (yajl_val obj, const char *key);

/* Fill the already zeroed struct `obj` of type `t` from object `v`.  On
 * failure what was filled stays in `obj`, for oj_free_fields. */
int oj_parse_object (yajl_val v, const oj_path *path, const oj_type *t,
                     void *obj, sr_error **err);

/* Parse a document whose top level is an object of type `t`: a new struct,
 * or NULL with *err set. */
void *oj_parse_data (const char *data, size_t len, const oj_type *t,
                     sr_error **err);

/* Free what the fields of `obj` own (not obj itself) / and obj too. */
void oj_free_fields (const oj_type *t, void *obj);
void oj_free (const oj_type *t, void *obj);

/* `obj` of type `t` as an indented JSON document with a trailing newline,
 * malloc'd (write.c); NULL with errno EILSEQ when a string is not UTF-8. */
char *oj_write (const oj_type *t, const void *obj);

/* The descriptions (schema.c). */
extern const oj_type oci_config_type;
extern const oj_type oci_process_type;
extern const oj_type oci_resources_type;
extern const oj_type oci_seccomp_type;
extern const oj_type oci_state_type;
extern const oj_type oci_linux_type;
extern const oj_type oci_id_mapping_type;

/* Validators used by the descriptions (config.c). */
int oci_config_check (const void *obj, const oj_path *path, sr_error **err);
int oci_hook_check (const void *obj, const oj_path *path, sr_error **err);

#endif
