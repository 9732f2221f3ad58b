/* libFuzzer target: the config serialiser.  Whatever config.json parses is
 * written, the text must parse back, and writing that must give the same
 * text (parse -> write -> parse -> write is stable). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oci-spec/oci-spec.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  sr_error *err = NULL;
  oci_config *c = oci_config_parse_data ((const char *) data, size, &err);
  sr_error_free (err);
  if (c == NULL)
    return 0;
  /* The parser accepts only valid UTF-8, so writing cannot fail. */
  char *first = oci_config_to_json (c);
  if (first == NULL)
    abort ();
  err = NULL;
  oci_config *again = oci_config_parse_data (first, strlen (first), &err);
  if (again == NULL)
    abort ();
  char *second = oci_config_to_json (again);
  if (second == NULL || strcmp (first, second) != 0)
    abort ();
  free (second);
  free (first);
  oci_config_free (again);
  oci_config_free (c);
  return 0;
}
