/* Internals of the stats readers (stats.c, stats_v1.c, stats_v2.c). */
#ifndef SANDRUN_CGROUP_STATS_INTERNAL_H
#define SANDRUN_CGROUP_STATS_INTERNAL_H

#include "internal.h"
#include "core/cgroup/cgroup_stats.h"

/* A cgroup file that may be missing (an older kernel, a controller that is
 * not there): 1 with *out when read, 0 when it does not exist. */
int sr_cg_read_opt (int dirfd, const char *file, char **out, sr_error **err);
/* One number; "max" is UINT64_MAX; a missing file leaves *v alone. */
int sr_cg_read_u64_opt (int dirfd, const char *file, uint64_t *v,
                        sr_error **err);
/* Call `fn` for each line of a file that may be missing: 1 when read, 0
 * when missing, -1 when `fn` failed. */
typedef int (*sr_cg_line_fn) (const char *file, char *line, void *ctx,
                              sr_error **err);
int sr_cg_for_each_line_opt (int dirfd, const char *file, sr_cg_line_fn fn,
                             void *ctx, sr_error **err);
/* A flat keyed file ("key value" lines), sorted by key; missing: empty. */
int sr_cg_read_kv_opt (int dirfd, const char *file, sr_cg_kv **kv, size_t *n,
                       sr_error **err);
uint64_t sr_cg_kv_get (const sr_cg_kv *kv, size_t n, const char *key);
void sr_cg_kv_free (sr_cg_kv *kv, size_t n);
void sr_cg_u64_list_add (sr_cg_u64_list *l, uint64_t v);
/* A list of numbers separated by blanks ("123 456"), or with `ranges` a
 * cpuset list ("0-3,8"), from a file that may be missing. */
int sr_cg_read_list_opt (int dirfd, const char *file, bool ranges,
                         sr_cg_u64_list *out, sr_error **err);
/* Append to a blkio list. */
void sr_cg_blkio_add (sr_cg_blkio_list *l, uint64_t major, uint64_t minor,
                      const char *op, uint64_t value);
/* The page sizes of the hugetlb files in a directory whose names end with
 * `suffix` (".max", ".limit_in_bytes"), sorted. */
int sr_cg_hugetlb_sizes (int dirfd, const char *suffix, char ***sizes,
                         sr_error **err);

/* The figures of sr_cgroup_read_usage only. */
int sr_cg_v1_cpuacct_usage (int dirfd, sr_cgroup_stats *st, sr_error **err);
int sr_cg_v1_memory_usage (int dirfd, sr_cgroup_stats *st, sr_error **err);
int sr_cg_v2_memory_usage (int dirfd, sr_cgroup_stats *st, sr_error **err);

int sr_cg_v1_cpuacct_stats (int dirfd, sr_cgroup_stats *st, sr_error **err);
int sr_cg_v1_cpu_stats (int dirfd, sr_cgroup_stats *st, sr_error **err);
int sr_cg_v1_cpuset_stats (int dirfd, sr_cgroup_stats *st, sr_error **err);
int sr_cg_v1_memory_stats (int dirfd, sr_cgroup_stats *st, sr_error **err);
int sr_cg_v1_blkio_stats (int dirfd, sr_cgroup_stats *st, sr_error **err);
int sr_cg_v1_hugetlb_stats (int dirfd, sr_cgroup_stats *st, sr_error **err);

int sr_cg_v2_cpu_stats (int dirfd, sr_cgroup_stats *st, sr_error **err);
int sr_cg_v2_cpuset_stats (int dirfd, sr_cgroup_stats *st, sr_error **err);
int sr_cg_v2_memory_stats (int dirfd, sr_cgroup_stats *st, sr_error **err);
int sr_cg_v2_io_stats (int dirfd, sr_cgroup_stats *st, sr_error **err);
int sr_cg_v2_hugetlb_stats (int dirfd, sr_cgroup_stats *st, sr_error **err);

/* pids.current and pids.max are the same on v1 and v2. */
int sr_cg_pids_stats (int dirfd, sr_cgroup_stats *st, sr_error **err);

#endif
