/* The per-version writers of resource families (resources_v1.c and
 * resources_v2.c); each takes the container's directory in the hierarchy
 * that carries the controller. */
#ifndef SANDRUN_CGROUP_RESOURCES_H
#define SANDRUN_CGROUP_RESOURCES_H

#include "internal.h"

int sr_cg_v1_memory (int dirfd, const oci_resources *r, sr_error **err);
int sr_cg_v1_cpu (int dirfd, const oci_resources *r, sr_error **err);

int sr_cg_v1_blkio (int dirfd, const oci_resources *r, sr_error **err);
int sr_cg_v1_hugetlb (int dirfd, const oci_resources *r, sr_error **err);
int sr_cg_v1_net_cls (int dirfd, const oci_resources *r, sr_error **err);
int sr_cg_v1_net_prio (int dirfd, const oci_resources *r, sr_error **err);

int sr_cg_v2_memory (int dirfd, const oci_resources *r, sr_error **err);
int sr_cg_v2_cpu (int dirfd, const oci_resources *r, sr_error **err);
int sr_cg_v2_io (int dirfd, const oci_resources *r, sr_error **err);
int sr_cg_v2_hugetlb (int dirfd, const oci_resources *r, sr_error **err);
int sr_cg_v2_unified (int dirfd, const oci_resources *r, sr_error **err);

/* blockIO's four throttle lists, in the order read bps, write bps, read
 * iops, write iops. */
struct sr_cg_throttle
{
  const oci_throttle_device *d;
  size_t n;
};
void sr_cg_throttle_lists (const oci_block_io *b, struct sr_cg_throttle out[4]);

/* checkBeforeUpdate: refuse a limit below the current usage. */
int sr_cg_check_usage (int dirfd, const char *usage_file, int64_t limit,
                       sr_error **err);
/* Families whose files are the same on v1 and v2. */
int sr_cg_write_cpuset (int dirfd, const oci_resources *r, sr_error **err);
int sr_cg_write_pids (int dirfd, const oci_resources *r, sr_error **err);
int sr_cg_write_rdma (int dirfd, const oci_resources *r, sr_error **err);

#endif
