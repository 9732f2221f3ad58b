/* Idmapped mounts (config.json mounts[].uidMappings/gidMappings, options
 * "idmap" and "ridmap"): the runtime's half.
 *
 * MOUNT_ATTR_IDMAP needs CAP_SYS_ADMIN in the initial user namespace, which
 * the init lacks once it is in the container's user namespace.  So the
 * runtime makes each idmapped mount before the init is cloned: a user
 * namespace carrying the mount's mappings (one per distinct mapping, held by
 * a helper child only while its maps are written), a detached clone of the
 * bind source (open_tree, in the runtime's mount namespace: the source is a
 * host path), MOUNT_ATTR_IDMAP on it.  The init inherits the detached mounts
 * with its fd table and attaches each where the mount goes, like any other
 * bind (rootfs.c).
 *
 * Which mount is idmapped and with what (runtime-spec 1.2, runc 1.2):
 * - uidMappings/gidMappings on the mount: those, "ridmap" applying them to
 *   every mount of an rbind tree, otherwise to its top mount only;
 * - "idmap"/"ridmap" without mappings: the container's user namespace's
 *   (linux.uidMappings/gidMappings, or the namespace it joins by path), an
 *   error when it has none;
 * - both mappings are needed, and only bind mounts can be idmapped. */
#ifndef SANDRUN_IDMAP_H
#define SANDRUN_IDMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "oci-spec/types.h"
#include "sandrun/error.h"
#include "core/mountopt.h"
#include "core/namespaces.h"

/* Detached mounts prepared by the runtime: one fd per entry of
 * config.json's mounts, -1 for the entries it did not prepare. */
struct sr_mount_fds
{
  int *fds;
  size_t len;
};

/* Whether mount `m` (its options parsed into `o`) is an idmapped one. */
bool sr_idmap_mount_wanted (const oci_mount *m, const struct sr_mount_opts *o);

/* Whether any mount of `cfg` is idmapped (an unparsable option counts: the
 * preparation reports it). */
bool sr_idmap_wanted (const oci_config *cfg);

/* Whether this kernel can make idmapped mounts at all (mount_setattr). */
bool sr_idmap_available (void);

/* Make the detached idmapped mounts of `cfg` (relative sources start at
 * `bundle`; `ns` gives the user namespace the container joins, if any).
 * On failure nothing is left: no fd, no helper process. */
int sr_idmap_mounts_open (const oci_config *cfg, const char *bundle,
                          const struct sr_ns_plan *ns, struct sr_mount_fds *out,
                          sr_error **err);

/* Close what is left of them (the parent after the clone; the init after
 * its mounts). */
void sr_mount_fds_close (struct sr_mount_fds *m);

#endif
