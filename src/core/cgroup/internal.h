/* Internals of the cgroup module, shared by its files only.
 *
 * A container's cgroup is one directory in each cgroup hierarchy that the
 * host mounts: one cgroup2 hierarchy (pure v2, or "unified" on a hybrid
 * host) and/or one per v1 mount (a mount may carry several controllers,
 * e.g. "cpu,cpuacct", or none at all, e.g. "name=systemd").  Every path
 * below is relative to the hierarchy's mount point and starts with "/". */
#ifndef SANDRUN_CGROUP_INTERNAL_H
#define SANDRUN_CGROUP_INTERNAL_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/cgroup/cgroup.h"
#include "sandrun/error.h"

/* Resource families.  SR_CG_BLKIO stands for v1 "blkio" and v2 "io". */
enum sr_cg_ctrl
{
  SR_CG_CPU,
  SR_CG_CPUACCT,
  SR_CG_CPUSET,
  SR_CG_MEMORY,
  SR_CG_DEVICES,
  SR_CG_FREEZER,
  SR_CG_BLKIO,
  SR_CG_PIDS,
  SR_CG_HUGETLB,
  SR_CG_NET_CLS,
  SR_CG_NET_PRIO,
  SR_CG_PERF_EVENT,
  SR_CG_RDMA,
  SR_CG_MISC,
  SR_CG__COUNT
};

#define SR_CG_BIT(c) (1u << (c))

/* -1 for a name that is not a controller (e.g. "name=systemd"). */
int sr_cg_ctrl_from_name (const char *name);
/* The kernel's name: "blkio" on v1, "io" on v2. */
const char *sr_cg_ctrl_name (enum sr_cg_ctrl c, bool v2);

struct sr_cg_hier
{
  char *key;       /* the controllers field of /proc/self/cgroup: "memory",
                      "cpu,cpuacct", "name=systemd"; "" for cgroup2 */
  char *mnt;       /* mount point */
  bool v2;
  unsigned ctrls;  /* SR_CG_BIT set of the controllers available here */
  char *own;       /* this process's cgroup */
  char *path;      /* the container's cgroup */
  int fd;          /* O_DIRECTORY fd of mnt + path; -1 when not open */
  size_t created;  /* trailing components of `path` that this process made */
};

struct sr_cgroup
{
  sr_cgroup_layout layout;
  struct sr_cg_hier *h;
  size_t n;
  char *record;     /* what sr_cgroup_path() returns */
  bool from_create; /* made by sr_cgroup_create in this process */
  struct sr_cg_systemd *sd; /* the systemd driver's unit, NULL for cgroupfs */
};

void sr_cg_hier_clear (struct sr_cg_hier *h);

/* ---- cgroup.c: shared with the systemd driver -------------------------- */

/* A cgroup of the host's layout and hierarchies, with no path yet. */
sr_cgroup *sr_cg_discover (sr_error **err);
/* Create `normalized` in every hierarchy (failing when it already has
 * processes and `must_be_unused`), then apply the resources and device
 * rules; on failure, remove the directories it made. */
int sr_cg_realize (sr_cgroup *cg, const char *normalized, bool must_be_unused,
                   const oci_resources *res, const oci_device *devices,
                   size_t devices_len, sr_error **err);

/* ---- systemd.c: the systemd driver's part of the calls of cgroup.h ----- */

/* sr_cgroup_open: the unit named by the record's mark, if any. */
int sr_cg_systemd_attach (sr_cgroup *cg, sr_error **err);
/* sr_cgroup_enter: start a unit that sr_cgroup_systemd_create prepared,
 * with `pid` in it, and make the cgroupfs side (a no-op otherwise). */
int sr_cg_systemd_enter (sr_cgroup *cg, pid_t pid, sr_error **err);
/* sr_cgroup_apply: the resources as unit properties too. */
int sr_cg_systemd_apply (const sr_cgroup *cg, const oci_resources *res,
                         sr_error **err);
/* sr_cgroup_destroy: stop the unit (best effort: warns). */
void sr_cg_systemd_stop (const sr_cgroup *cg);
void sr_cg_systemd_free (struct sr_cg_systemd *sd);
/* systemd_dl.c: load libsystemd (once); an error says why it cannot be. */
int sr_sd_bus_load (sr_error **err);

/* ---- path.c: pure path handling ---------------------------------------- */

/* Validate and normalise linux.cgroupsPath (or, when NULL, the default
 * derived from `id`).  Result: "/a/b" (absolute) or "a/b" (relative); "//"
 * and "." are dropped; "..", control characters, ';' and the systemd
 * "slice:prefix:name" form are refused. */
int sr_cg_normalize (const char *id, const char *cgroups_path, char **out,
                     sr_error **err);

/* The container's cgroup in one hierarchy.  Absolute paths are taken as is.
 * Relative ones are below this process's own cgroup on v1, and below its
 * parent on cgroup2 (whose own cgroup holds processes, so it cannot enable
 * controllers for children: the "no internal processes" rule) -- runc's
 * behaviour for both. */
char *sr_cg_resolve (const char *own, bool v2, const char *normalized);

/* The recorded form: "PATH" when every hierarchy has the same path, else
 * "PATH;KEY:PATH2;..." with the most common path first and the hierarchies
 * that differ after it, KEY as in /proc/self/cgroup ("" for cgroup2). */
char *sr_cg_record_format (const struct sr_cg_hier *h, size_t n);
/* The path for hierarchy `key` from a recorded form (malloc'd). */
int sr_cg_record_lookup (const char *record, const char *key, char **path,
                         sr_error **err);

/* ---- hierarchy.c: what the host mounts --------------------------------- */

/* Parse the texts of /proc/self/cgroup and /proc/self/mountinfo into the
 * hierarchies to use (mountinfo may be NULL for pure v2: /sys/fs/cgroup).
 * `ctrls` of cgroup2 hierarchies is left 0 (it comes from a file). */
int sr_cg_hier_parse (sr_cgroup_layout layout, const char *proc_cgroup,
                      const char *mountinfo, struct sr_cg_hier **out,
                      size_t *n, sr_error **err);
/* The same from the live files, with cgroup2 controllers filled in. */
int sr_cg_hier_discover (sr_cgroup_layout layout, struct sr_cg_hier **out,
                         size_t *n, sr_error **err);
/* Parse a controller list ("cpu io memory" or "cpu,cpuacct") to SR_CG_BITs. */
unsigned sr_cg_ctrls_parse (const char *list, const char *seps, bool v2);

/* The hierarchy that carries a controller, NULL if none. */
struct sr_cg_hier *sr_cg_find (const sr_cgroup *cg, enum sr_cg_ctrl c);
/* For messages: the key, or "unified" for cgroup2. */
const char *sr_cg_hier_name (const struct sr_cg_hier *h);
/* The cgroup2 hierarchy, NULL if none. */
struct sr_cg_hier *sr_cg_unified (const sr_cgroup *cg);
/* The hierarchy that lists the container's processes. */
struct sr_cg_hier *sr_cg_primary (const sr_cgroup *cg);

/* ---- fs.c: files and directories of cgroupfs --------------------------- */

/* Write `value` to `file` in one write(2).  Errors read
 * `cgroup "FILE" = "VALUE": strerror`. */
int sr_cg_write (int dirfd, const char *file, const char *value,
                 sr_error **err);
int sr_cg_writef (int dirfd, const char *file, sr_error **err,
                  const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));
/* Read a small cgroup file; trailing newlines are stripped. */
int sr_cg_read (int dirfd, const char *file, char **out, sr_error **err);
/* The value of `key` in a flat keyed file ("populated 1"), -1 if absent. */
int sr_cg_read_key (int dirfd, const char *file, const char *key,
                    long long *value, sr_error **err);

/* Called for each directory of the path as the walk reaches it. */
typedef int (*sr_cg_prepare_fn) (int parentfd, int dirfd, bool created,
                                 sr_error **err);
/* mkdir -p of h->path below the mount, without following symlinks; sets
 * h->fd and counts h->created as it goes (so a failure can be undone). */
int sr_cg_mkdir_path (struct sr_cg_hier *h, sr_cg_prepare_fn prepare,
                      sr_error **err);
/* Open h->fd; a missing directory leaves it -1 and is not an error. */
int sr_cg_open_path (struct sr_cg_hier *h, sr_error **err);
/* rmdir the container's directory with any sub-cgroups; with
 * `created_only`, only the trailing h->created components instead (leaf and
 * parents that this process made).  Retries briefly while exiting processes
 * leave; a missing directory is not an error. */
int sr_cg_remove_path (struct sr_cg_hier *h, bool created_only,
                       sr_error **err);
/* A readdir handle on an opened cgroup directory (its own fd). */
DIR *sr_cg_opendir (int dirfd, sr_error **err);
/* The pids in a cgroup and its descendants, appended to *pids. */
int sr_cg_collect_pids (int dirfd, pid_t **pids, size_t *n, sr_error **err);
/* Sleep for a few milliseconds (polling helper). */
void sr_cg_nap (unsigned ms);

/* ---- v1.c / v2.c: version specifics ------------------------------------ */

int sr_cg_v1_prepare_cpuset (int parentfd, int dirfd, bool created,
                             sr_error **err);
int sr_cg_v1_freeze (int dirfd, bool frozen, sr_error **err);
int sr_cg_v1_is_frozen (int dirfd, bool *frozen, sr_error **err);

int sr_cg_v2_prepare (int parentfd, int dirfd, bool created, sr_error **err);
int sr_cg_v2_freeze (int dirfd, bool frozen, sr_error **err);
int sr_cg_v2_is_frozen (int dirfd, bool *frozen, sr_error **err);
/* 1 when cgroup.kill did it, 0 when the kernel has no cgroup.kill. */
int sr_cg_v2_kill (int dirfd, sr_error **err);

/* ---- convert.c: v1 -> v2 values (see the comment there) ---------------- */

uint64_t sr_cg_shares_to_weight (uint64_t shares);
uint64_t sr_cg_blkio_weight_to_io_weight (uint64_t weight);
/* OCI memory.swap (memory+swap) to memory.swap.max; *out -1 = "max",
 * 0 = leave unset. */
int sr_cg_swap_to_v2 (int64_t swap, int64_t limit, int64_t *out,
                      sr_error **err);
/* "max" for a negative value, else the number (malloc'd). */
char *sr_cg_v2_limit (int64_t value);

/* ---- resources.c ------------------------------------------------------- */

int sr_cg_apply_resources (const sr_cgroup *cg, const oci_resources *res,
                           sr_error **err);
/* A hugetlb page size as the kernel names it: "<digits><K|M|G>B". */
bool sr_cg_page_size_valid (const char *s);
/* The device cgroup: the rules of devices.h, v1 controller or eBPF. */
int sr_cg_apply_devices (const sr_cgroup *cg, const oci_resources *res,
                         const oci_device *devs, size_t ndevs, sr_error **err);

#endif
