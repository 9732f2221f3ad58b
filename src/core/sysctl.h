/* linux.sysctl, written by the init after pivot_root through the verified
 * procfs handle; a sysctl of a namespace the container does not own is
 * refused. */
#ifndef SANDRUN_SYSCTL_H
#define SANDRUN_SYSCTL_H

#include "oci-spec/types.h"
#include "sandrun/error.h"

int sr_sysctl_apply (const oci_config *cfg, sr_error **err);

#endif
