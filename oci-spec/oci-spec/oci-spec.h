/* Parsing and serialising the OCI documents.  Parse errors name the JSON path
 * and the expectation ("linux.resources.memory.limit: expected integer");
 * wrong types are errors, never coerced; unknown fields are ignored. */
#ifndef OCI_SPEC_H
#define OCI_SPEC_H

#include <stddef.h>

#include "oci-spec/types.h"
#include "sandrun/error.h"

/* Supported ociVersion range: 1.0.0 up to and including 1.3.x.  Pre-release
 * suffixes ("1.2.1-dev", "1.0.2+dev") are accepted. */
#define OCI_SPEC_VERSION "1.3.0"

/* Documents larger than this are refused (config.json, process.json, ...). */
#define OCI_MAX_DOCUMENT_SIZE (64u * 1024 * 1024)

/* config.json */
oci_config *oci_config_parse_file (const char *path, sr_error **err);
oci_config *oci_config_parse_data (const char *data, size_t len, sr_error **err);
void oci_config_free (oci_config *c);
/* The config as JSON (tab-indented, trailing newline), malloc'd: every field
 * the parser knows, absent ones left out, so that parsing the text gives the
 * same struct (tests/unit/test-oci-write.c checks parse -> write -> parse ->
 * write is stable).  For a config built in memory, e.g. by the sandbox layer,
 * which the runtime then saves and parses like any config.json.  NULL with
 * errno EILSEQ when a string is not valid UTF-8 (JSON cannot carry it);
 * running out of memory aborts, as every x* allocation does.  A required
 * field left NULL is simply not written: the parser then names it. */
char *oci_config_to_json (const oci_config *cfg);

/* A lone process object (`exec --process process.json`); `cwd` defaults are
 * the caller's business, so it is optional here. */
oci_process *oci_process_parse_data (const char *data, size_t len, sr_error **err);
void oci_process_free (oci_process *p);

/* A lone linux.resources object (`update -r resources.json`). */
oci_resources *oci_resources_parse_data (const char *data, size_t len, sr_error **err);
void oci_resources_free (oci_resources *r);

/* A lone linux.seccomp object (contrib profiles, fuzzing). */
oci_seccomp *oci_seccomp_parse_data (const char *data, size_t len, sr_error **err);
void oci_seccomp_free (oci_seccomp *s);

/* state.json as `sandrun state` prints it (runc's shape: ociVersion, id, pid,
 * status, bundle, rootfs, created, owner, annotations).  Returns a malloc'd,
 * indented JSON document with a trailing newline. */
char *oci_state_to_json (const oci_state *s);
oci_state *oci_state_parse_data (const char *data, size_t len, sr_error **err);
void oci_state_free (oci_state *s);

/* Helpers for the free functions of embedded values. */
void oci_map_free (oci_map *m);
const char *oci_map_get (const oci_map *m, const char *key);

#endif
