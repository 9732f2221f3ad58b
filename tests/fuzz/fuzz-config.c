/* libFuzzer target: config.json parsing and freeing, plus the lone process
 * and resources objects and the state round-trip, which share the engine. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oci-spec/oci-spec.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *text = (const char *) data;
  sr_error *err = NULL;

  oci_config_free (oci_config_parse_data (text, size, &err));
  sr_error_free (err);
  err = NULL;

  oci_process_free (oci_process_parse_data (text, size, &err));
  sr_error_free (err);
  err = NULL;

  oci_resources_free (oci_resources_parse_data (text, size, &err));
  sr_error_free (err);
  err = NULL;

  oci_state *st = oci_state_parse_data (text, size, &err);
  if (st != NULL)
    {
      /* What we print must parse back. */
      char *json = oci_state_to_json (st);
      sr_error *err2 = NULL;
      oci_state *again = oci_state_parse_data (json, strlen (json), &err2);
      if (again == NULL)
        abort ();
      oci_state_free (again);
      free (json);
    }
  oci_state_free (st);
  sr_error_free (err);
  return 0;
}
