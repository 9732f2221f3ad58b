/* Entry points for config.json and its lone parts, and the checks that a
 * type-by-type walk cannot express. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "oci-spec/oci-spec.h"
#include "sandrun/util.h"

/* Read a decimal component of a version; NULL unless at least one digit. */
static const char *
version_number (const char *s, unsigned long *out)
{
  if (*s < '0' || *s > '9')
    return NULL;
  unsigned long n = 0;
  for (; *s >= '0' && *s <= '9'; s++)
    n = n > 1000000 ? n : n * 10 + (unsigned long) (*s - '0');
  *out = n;
  return s;
}

/* MAJOR.MINOR.PATCH with an optional -pre-release or +build suffix. */
static bool
version_supported (const char *v)
{
  unsigned long major, minor, patch;
  const char *s = version_number (v, &major);
  if (s == NULL || *s++ != '.' || (s = version_number (s, &minor)) == NULL
      || *s++ != '.' || (s = version_number (s, &patch)) == NULL)
    return false;
  if (*s != '\0' && *s != '-' && *s != '+')
    return false;
  return major == 1 && minor <= 3;
}

int
oci_config_check (const void *obj, const oj_path *path, sr_error **err)
{
  const oci_config *c = obj;
  if (!version_supported (c->oci_version))
    {
      _cleanup_free_ char *shown = oj_escape (c->oci_version);
      return sr_fail (err, 0,
                      "ociVersion \"%s\" is not supported (1.0.0 to 1.3.x)",
                      shown);
    }
  if (c->process != NULL && c->process->cwd == NULL)
    {
      oj_path pp = OJ_FIELD_PATH (path, "process");
      oj_path cp = OJ_FIELD_PATH (&pp, "cwd");
      return oj_fail (&cp, err, "required");
    }
  return 0;
}

int
oci_hook_check (const void *obj, const oj_path *path, sr_error **err)
{
  const oci_hook *h = obj;
  if (h->timeout.set && h->timeout.value <= 0)
    {
      oj_path tp = OJ_FIELD_PATH (path, "timeout");
      return oj_fail (&tp, err, "must be greater than zero");
    }
  return 0;
}

oci_config *
oci_config_parse_data (const char *data, size_t len, sr_error **err)
{
  return oj_parse_data (data, len, &oci_config_type, err);
}

oci_config *
oci_config_parse_file (const char *path, sr_error **err)
{
  _cleanup_free_ char *data = NULL;
  size_t len = 0;
  if (sr_read_file_at (AT_FDCWD, path, OCI_MAX_DOCUMENT_SIZE, &data, &len, err)
      < 0)
    return NULL;
  oci_config *c = oci_config_parse_data (data, len, err);
  if (c == NULL)
    sr_wrap (err, "%s", path);
  return c;
}

oci_process *
oci_process_parse_data (const char *data, size_t len, sr_error **err)
{
  return oj_parse_data (data, len, &oci_process_type, err);
}

oci_resources *
oci_resources_parse_data (const char *data, size_t len, sr_error **err)
{
  return oj_parse_data (data, len, &oci_resources_type, err);
}

oci_seccomp *
oci_seccomp_parse_data (const char *data, size_t len, sr_error **err)
{
  return oj_parse_data (data, len, &oci_seccomp_type, err);
}
