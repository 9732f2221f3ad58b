/* process.ioPriority through ioprio_set(2) on the init itself, so the
 * process and its children inherit it.  As runc: IOPRIO_WHO_PROCESS of the
 * calling process. */
#include <errno.h>
#include <inttypes.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux_attrs_internal.h"
#include "sandrun/util.h"

/* include/uapi/linux/ioprio.h */
#define IOPRIO_WHO_PROCESS_ 1
#define IOPRIO_CLASS_SHIFT_ 13

static const struct
{
  const char *name;
  int klass;
} io_classes[] = {
  { "IOPRIO_CLASS_RT", 1 },
  { "IOPRIO_CLASS_BE", 2 },
  { "IOPRIO_CLASS_IDLE", 3 },
};

int
sr_io_priority_apply (const oci_io_priority *io, sr_error **err)
{
  int klass = -1;

  if (io == NULL)
    return 0;
  for (size_t i = 0; i < ARRAY_SIZE (io_classes); i++)
    if (str_eq (io->klass, io_classes[i].name))
      klass = io_classes[i].klass;
  if (klass < 0)
    return sr_fail (err, 0,
                    "process.ioPriority.class \"%s\" is unknown "
                    "(IOPRIO_CLASS_RT, IOPRIO_CLASS_BE or IOPRIO_CLASS_IDLE)",
                    io->klass ? io->klass : "");
  if (io->priority < 0 || io->priority > 7)
    return sr_fail (err, 0,
                    "process.ioPriority.priority %" PRId32
                    " is out of range (0 to 7)",
                    io->priority);
  int value = (klass << IOPRIO_CLASS_SHIFT_) | io->priority;
  if (syscall (SYS_ioprio_set, IOPRIO_WHO_PROCESS_, 0, value) < 0)
    return sr_fail (err, errno, "process.ioPriority: ioprio_set %s %" PRId32,
                    io->klass, io->priority);
  return 0;
}
