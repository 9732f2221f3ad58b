/* cgroups: one interface over v1, v2 and hybrid hosts.  The layout is
 * detected once per invocation (statfs of /sys/fs/cgroup and, on v1, of
 * /sys/fs/cgroup/unified).  A container's cgroup is recorded in its state as
 * the path string returned by sr_cgroup_path(), which sr_cgroup_open() takes
 * back in later commands. */
#ifndef SANDRUN_CGROUP_H
#define SANDRUN_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci-spec/types.h"
#include "sandrun/error.h"

typedef enum
{
  SR_CGROUP_V1 = 1,  /* one hierarchy per controller, no unified mount */
  SR_CGROUP_V2,      /* unified only */
  SR_CGROUP_HYBRID,  /* v1 controllers plus /sys/fs/cgroup/unified */
} sr_cgroup_layout;

typedef struct sr_cgroup sr_cgroup;

int sr_cgroup_detect (sr_cgroup_layout *layout, sr_error **err);

/* Create the container's cgroup (every hierarchy that the layout has), with
 * the parents' controllers enabled on v2, and apply `res` (may be NULL).
 * cgroups_path: linux.cgroupsPath, NULL for the default derived from `id`.
 * On failure nothing created is left behind. */
int sr_cgroup_create (const char *id, const char *cgroups_path,
                      const oci_resources *res, sr_cgroup **out,
                      sr_error **err);

/* The same, checking the device nodes of linux.devices (which get no rule
 * of their own, as with runc).  Every create restricts devices: deny all,
 * then res->devices in order, then the nodes every container gets (null,
 * zero, full, random, urandom, tty, console, ptmx, pts/N, mknod of any)
 * -- v1's devices controller, or an eBPF filter on cgroup v2. */
int sr_cgroup_create_with_devices (const char *id, const char *cgroups_path,
                                   const oci_resources *res,
                                   const oci_device *devices,
                                   size_t devices_len, sr_cgroup **out,
                                   sr_error **err);

/* The record sr_cgroup_create would produce for these arguments, computed
 * without creating anything: a create records it first, so that a create
 * killed half-way leaves nothing `delete --force` cannot find. */
char *sr_cgroup_plan_path (const char *id, const char *cgroups_path, sr_error **err);

/* A container's cgroup as create asks for it; the driver is chosen here,
 * in cgroup/, not by the caller. */
struct sr_cgroup_spec
{
  const char *id;
  const char *cgroups_path; /* linux.cgroupsPath, NULL: the default */
  const oci_resources *res; /* may be NULL */
  const oci_device *devices;
  size_t devices_len;
  bool systemd; /* --systemd-cgroup: a transient unit (cgroup_systemd.h) */
};

/* sr_cgroup_plan_path and sr_cgroup_create_with_devices of the driver
 * `spec` names (later commands find it in the recorded path). */
char *sr_cgroup_plan (const struct sr_cgroup_spec *spec, sr_error **err);
int sr_cgroup_make (const struct sr_cgroup_spec *spec, sr_cgroup **out,
                    sr_error **err);

/* ---- the container's view (mount.c) ------------------------------------- */

struct sr_mount_opts;

/* How sr_cgroup_mount reaches the container's rootfs: the rootfs code's
 * primitives, which open every target under the rootfs (safepath). */
struct sr_cgroup_mounter
{
  void *env;
  /* A new filesystem of `type` on dest. */
  int (*new_fs) (void *env, const char *dest, const char *type,
                 const char *source, const struct sr_mount_opts *o,
                 sr_error **err);
  /* A host path bound on dest. */
  int (*bind_host) (void *env, const char *dest, const char *src,
                    const struct sr_mount_opts *o, sr_error **err);
  int rootfd;    /* the rootfs */
  bool cgroupns; /* the container has a cgroup namespace of its own */
};

/* A "cgroup" mount on dest, in the init: on a v2 host cgroup2 (the
 * namespace's view; without one a user namespace gets its own cgroup
 * bound), else a tmpfs holding each v1 hierarchy the init belongs to (its
 * own cgroup bound, or with a cgroup namespace a fresh mount). */
int sr_cgroup_mount (const struct sr_cgroup_mounter *mt, const char *dest,
                     const char *source, const struct sr_mount_opts *o,
                     sr_error **err);

/* Re-open the cgroup of an existing container from its recorded path. */
int sr_cgroup_open (const char *recorded_path, sr_cgroup **out,
                    sr_error **err);

/* The same, descending into the existing sub-cgroups of `exec --cgroup`
 * ("[CONTROLLER[,CONTROLLER]:]PATH" each, runc's forms; NULL or empty: the
 * container's cgroup).  A sub-cgroup that does not exist makes
 * sr_cgroup_enter fail. */
int sr_cgroup_open_sub (const char *recorded_path, char *const *subs,
                        sr_cgroup **out, sr_error **err);

/* The path to record in the state (absolute within the hierarchies).
 * Usually one path ("/default/web"), the same in every hierarchy.  Where a
 * relative cgroupsPath (or none: the default is the id, relative, as with
 * runc) lands at different places because this process sits at different
 * places in the v1 hierarchies, the hierarchies that differ follow:
 * "/web;memory:/user.slice/web" (keys as in /proc/self/cgroup, "" for
 * cgroup2). */
const char *sr_cgroup_path (const sr_cgroup *cg);

/* v2/hybrid: an O_DIRECTORY fd of the unified cgroup, for
 * clone3(CLONE_INTO_CGROUP); -1 where there is none. */
int sr_cgroup_clone_fd (const sr_cgroup *cg);

/* Before the clone, for the child to move itself: fds[i] for the i-th
 * hierarchy, the "tasks" file of a v1 one (else -1); returns how many
 * entries (0: nothing to do, as for the systemd driver or more than `max`
 * hierarchies).  The child, still single-threaded, writes "0" to each:
 * moving another process (a pid into cgroup.procs) takes the kernel's
 * global threadgroup lock for writing, whose first writer after a quiet
 * spell waits a whole RCU grace period (10-15 ms measured).  The fds were
 * opened by this process, so the write is allowed even from the child's
 * new user namespace. */
size_t sr_cgroup_join_open (const sr_cgroup *cg, int *fds, size_t max);

/* The bit (1 << i) of the hierarchy that sr_cgroup_clone_fd is. */
uint64_t sr_cgroup_clone_bit (const sr_cgroup *cg);

/* Move `pid` into the cgroup in every hierarchy i whose bit (1 << i) is
 * not set in `joined` (those it is in already: cloned into the unified
 * one, moved by itself into v1 ones).  A cgroup of the systemd driver's
 * create starts its unit with `pid` first (cgroup_systemd.h). */
int sr_cgroup_enter (sr_cgroup *cg, pid_t pid, uint64_t joined,
                     sr_error **err);

/* Apply resources (create and `update`); on a hybrid host, first enable
 * on the way down the cgroup2 controllers they need.  Device rules are rewritten only
 * when res->devices is not empty, and then without linux.devices. */
int sr_cgroup_apply (sr_cgroup *cg, const oci_resources *res,
                     sr_error **err);

/* The pids in the cgroup (recursively), malloc'd. */
int sr_cgroup_pids (const sr_cgroup *cg, pid_t **pids, size_t *n,
                    sr_error **err);

/* Signal every process in the cgroup (v2 cgroup.kill for SIGKILL where
 * present). */
int sr_cgroup_kill (const sr_cgroup *cg, int signo, sr_error **err);

/* Freeze or thaw every process (v1 freezer where mounted, else cgroup2's
 * cgroup.freeze), waiting (bounded) until the state has settled. */
int sr_cgroup_freeze (const sr_cgroup *cg, bool frozen, sr_error **err);

/* Whether create joined a cgroup that had processes already (with a
 * warning): delete must then leave those processes and the cgroup. */
bool sr_cgroup_shared (const sr_cgroup *cg);

/* Whether the cgroup is frozen now (false when it does not exist): what
 * `state` reports as "paused". */
int sr_cgroup_frozen (const sr_cgroup *cg, bool *frozen, sr_error **err);
/* The same for the cgroup recorded as `recorded_path`, opening nothing
 * but the freezer's hierarchy. */
int sr_cgroup_frozen_at (const char *recorded_path, bool *frozen,
                         sr_error **err);

/* Remove the cgroup from every hierarchy (waiting briefly for exiting
 * processes).  A missing cgroup is not an error. */
int sr_cgroup_destroy (const sr_cgroup *cg, sr_error **err);

void sr_cgroup_free (sr_cgroup *cg);
void sr_cgroup_freep (sr_cgroup **cg);
#define _cleanup_cgroup_ __attribute__ ((cleanup (sr_cgroup_freep)))

#endif
