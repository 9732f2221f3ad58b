/* Namespaces: which to create, which to join (by path), and the parent's
 * part in a new user or time namespace (id maps, clock offsets). */
#ifndef SANDRUN_NAMESPACES_H
#define SANDRUN_NAMESPACES_H

#include <stdbool.h>
#include <sys/types.h>

#include "oci-spec/types.h"
#include "sandrun/error.h"

struct sr_ns_plan
{
  int new_flags;  /* CLONE_NEW* to create */
  int join_flags; /* CLONE_NEW* joined by path */
  int *join_fds;  /* per linux.namespaces entry: an fd of the path, or -1 */
  size_t join_len;
  /* Creating everything at clone time is not possible: a namespace is joined
   * by path (it must be joined before a new user namespace exists), or time
   * offsets must be written before any process enters the time namespace.
   * The init is then set up with setns + unshare and a second fork. */
  bool two_step;
  bool time_offsets;
};

/* CLONE_NEW* of an OCI namespace type ("network" -> CLONE_NEWNET), 0 when
 * unknown. */
int sr_ns_flag (const char *type);
/* The i-th namespace type sr_ns_flag knows, NULL past the end (for
 * `sandrun features`). */
const char *sr_ns_type_name (size_t i);

/* Validate linux.namespaces (unknown or duplicate types, a path that is not
 * a namespace of that type) and open every path (in the runtime's mount
 * namespace, before anything moves).  The fds are close-on-exec. */
int sr_ns_plan_make (const oci_linux *l, struct sr_ns_plan *plan, sr_error **err);
void sr_ns_plan_clear (struct sr_ns_plan *plan);

/* In the init: setns every joined namespace whose flag is in `which`, the
 * user namespace first. */
int sr_ns_join (const struct sr_ns_plan *plan, int which, sr_error **err);

/* Parent: write /proc/PID/{uid_map,gid_map} from linux.uidMappings and
 * gidMappings (through the verified procfs handle). */
int sr_ns_write_id_maps (pid_t pid, const oci_linux *l, sr_error **err);

/* Parent: write /proc/PID/timens_offsets from linux.timeOffsets. */
int sr_ns_write_time_offsets (pid_t pid, const oci_linux *l, sr_error **err);

#endif
