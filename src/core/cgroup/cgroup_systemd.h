/* The systemd cgroup driver (--systemd-cgroup), as runc's: the container's
 * cgroup is a transient unit that systemd creates over D-Bus (sd-bus), with
 * the resources it understands as unit properties; the cgroupfs code then
 * applies everything (systemd's part included, and what systemd cannot
 * express), and every later command works on the unit's cgroup like on any
 * other.
 *
 * linux.cgroupsPath is "slice:prefix:name" (empty or absent:
 * ":sandrun:ID").  The unit is "prefix-name.scope" in the slice (default
 * system.slice), or the slice "name" itself when name ends in ".slice".
 *
 * The recorded path (sr_cgroup_path) is the unit's cgroup followed by
 * ";@systemd:system" -- so that delete stops the unit and update sets its
 * properties even when only the record is left (a create killed half-way).
 *
 * The first half of this header is pure (unit names, properties: unit
 * tested); the second needs the bus. */
#ifndef SANDRUN_CGROUP_SYSTEMD_H
#define SANDRUN_CGROUP_SYSTEMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci-spec/types.h"
#include "core/cgroup/cgroup.h"
#include "sandrun/error.h"

/* What the record carries after the path. */
#define SR_SD_RECORD_MARK ";@systemd:system"

/* ---- unit names (systemd_unit.c) ----------------------------------------- */

struct sr_sd_unit
{
  char *slice;   /* the parent slice: "system.slice" */
  char *name;    /* the unit: "sandrun-web.scope" or "a-b.slice" */
  char *path;    /* its cgroup: "/system.slice/sandrun-web.scope" */
  bool is_slice; /* a slice unit (no processes of its own in systemd's view) */
};

/* "a-b-c.slice" -> "/a.slice/a-b.slice/a-b-c.slice", "-.slice" -> "/";
 * refuses names without the suffix, with '/', or with empty components
 * ("-a.slice", "a--b.slice", "a-.slice"). */
int sr_sd_expand_slice (const char *slice, char **path, sr_error **err);

/* The unit for cgroupsPath (NULL or "": ":sandrun:ID"), runc's rules.  Any
 * other form than three ':'-separated fields is refused, and so are names
 * systemd would refuse (characters outside [A-Za-z0-9:_.\\-], too long). */
int sr_sd_unit_parse (const char *id, const char *cgroups_path,
                      struct sr_sd_unit *out, sr_error **err);
void sr_sd_unit_clear (struct sr_sd_unit *u);

/* "252.39-1~deb12u2", "v245.4-1.fc32", "\"245\"" -> 252, 245, 245; -1 when
 * there is no leading number. */
int sr_sd_parse_version (const char *s);

/* ---- unit properties (systemd_props.c) ----------------------------------- */

enum sr_sd_type
{
  SR_SD_STRING,  /* s */
  SR_SD_BOOL,    /* b */
  SR_SD_U64,     /* t */
  SR_SD_U32S,    /* au */
  SR_SD_BYTES,   /* ay */
  SR_SD_DEVICES, /* a(ss): DeviceAllow */
};

/* systemd's "infinity" for limits and CPUQuotaPerSecUSec. */
#define SR_SD_INFINITY UINT64_MAX

struct sr_sd_device_allow
{
  char *path;     /* "/dev/char/1:3", "char-136", "block-*" */
  char perms[4];  /* "rwm" or a part of it */
};

struct sr_sd_prop
{
  const char *name; /* a string literal */
  enum sr_sd_type type;
  char *str;
  bool b;
  uint64_t u64;
  uint32_t *u32s;
  uint8_t *bytes;
  struct sr_sd_device_allow *devs;
  size_t len; /* of u32s, bytes or devs */
};

struct sr_sd_props
{
  struct sr_sd_prop *v;
  size_t len;
};

/* A new zeroed property at the end of the list. */
struct sr_sd_prop *sr_sd_props_add (struct sr_sd_props *p, const char *name,
                                    enum sr_sd_type type);
void sr_sd_props_clear (struct sr_sd_props *p);
#define _cleanup_sd_props_ __attribute__ ((cleanup (sr_sd_props_clear)))
/* The last property of that name, NULL if none (tests, the fake systemd). */
const struct sr_sd_prop *sr_sd_props_find (const struct sr_sd_props *p,
                                           const char *name);
/* "MemoryMax=1048576", "AllowedCPUs=0x0f", "DeviceAllow=[/dev/char/1:3 rwm,
 * char-136 rwm]": for debug logs and tests (malloc'd). */
char *sr_sd_prop_format (const struct sr_sd_prop *p);

/* What a unit gets besides resources: Description, Slice (a scope) or
 * Wants (a slice), Delegate=yes (a scope), the accounting switches
 * (IOAccounting on v2, BlockIOAccounting on v1), DefaultDependencies=no and,
 * for a scope and pid > 0, PIDs=[pid]. */
void sr_sd_unit_props (const struct sr_sd_unit *u, const char *description,
                       pid_t pid, bool v2, struct sr_sd_props *out);

/* linux.resources as unit properties, appended to `out`: on v2 MemoryMax,
 * MemoryLow, MemorySwapMax, CPUWeight, IOWeight; on v1 MemoryLimit,
 * CPUShares, BlockIOWeight; on both CPUQuotaPerSecUSec (rounded up to
 * systemd's 1% steps) and CPUQuotaPeriodUSec (systemd >= 242), TasksMax,
 * AllowedCPUs/AllowedMemoryNodes (>= 244).  The v1 -> v2 conversions are
 * convert.c's.  sd_version < 0: unknown, as old.  res may be NULL. */
int sr_sd_resource_props (const oci_resources *res, bool v2, int sd_version,
                          struct sr_sd_props *out, sr_error **err);

/* The device rules of sr_cgroup_create_with_devices as DevicePolicy and
 * DeviceAllow (reset, then the list), never allowing more than the rules
 * do: systemd may re-apply them at any time (on v1 over ours).  What
 * systemd cannot express ("c *:5", a deny carved out of a wider allow)
 * leaves the wider allow out: the cgroupfs rules then stay the authority
 * until systemd re-applies its own, which are stricter. */
int sr_sd_device_props (const oci_resources *res, const oci_device *devs,
                        size_t ndevs, struct sr_sd_props *out,
                        sr_error **err);

/* ---- the bus (systemd_bus.c) --------------------------------------------- */

/* Whether sandrun was built with libsystemd (else every call below fails
 * saying so). */
bool sr_cgroup_systemd_built (void);

typedef struct sr_sd_bus sr_sd_bus;

/* The system bus (DBUS_SYSTEM_BUS_ADDRESS when set). */
int sr_sd_bus_open (sr_sd_bus **out, sr_error **err);
void sr_sd_bus_close (sr_sd_bus *b);
/* systemd's version (the Manager's Version property, -1 when it has no
 * number); fails when systemd is not on the bus. */
int sr_sd_bus_version (sr_sd_bus *b, int *version, sr_error **err);
/* StartTransientUnit(unit, "replace", props), then its job's JobRemoved
 * (30 s at most): "done" or an error.  A failed unit of that name left
 * over is reset and the start tried once more. */
int sr_sd_start_unit (sr_sd_bus *b, const char *unit,
                      const struct sr_sd_props *props, sr_error **err);
/* StopUnit and its job; a unit that does not exist is not an error. */
int sr_sd_stop_unit (sr_sd_bus *b, const char *unit, sr_error **err);
/* SetUnitProperties(unit, runtime, props). */
int sr_sd_set_unit_props (sr_sd_bus *b, const char *unit,
                          const struct sr_sd_props *props, sr_error **err);

/* ---- the driver (systemd.c) ---------------------------------------------- */

/* sr_cgroup_plan_path for the systemd driver. */
char *sr_cgroup_systemd_plan_path (const char *id, const char *cgroups_path,
                                   sr_error **err);

/* sr_cgroup_create_with_devices for the systemd driver: connects to the
 * system bus now (no bus: an error, nothing created) and computes the
 * properties; the unit is started by sr_cgroup_enter with the init's pid
 * (there is nothing to clone into before: sr_cgroup_clone_fd is -1), which
 * then creates and fills the cgroupfs side.  res and devices must stay
 * valid until then. */
int sr_cgroup_systemd_create (const char *id, const char *cgroups_path,
                              const oci_resources *res,
                              const oci_device *devices, size_t devices_len,
                              sr_cgroup **out, sr_error **err);

#endif
