/* The OCI runtime-spec data model (config.md, config-linux.md, runtime.md's
 * state, features.md), as plain C types.  Nothing here knows Linux: the
 * runtime gives these fields their meaning.
 *
 * Conventions:
 *   - strings are `char *`, NULL when absent;
 *   - string arrays are NULL-terminated `char **`, NULL when absent (an empty
 *     JSON array gives a non-NULL vector of length 0);
 *   - arrays of objects are `T *name; size_t name_len;`;
 *   - optional scalars are oci_opt_* with a `set` flag;
 *   - objects that may be absent are pointers, NULL when absent;
 *   - JSON objects used as string maps are oci_map, in document order. */
#ifndef OCI_SPEC_TYPES_H
#define OCI_SPEC_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { bool set; int64_t value; } oci_opt_i64;
typedef struct { bool set; uint64_t value; } oci_opt_u64;
typedef struct { bool set; uint32_t value; } oci_opt_u32;
typedef struct { bool set; int32_t value; } oci_opt_i32;
typedef struct { bool set; bool value; } oci_opt_bool;

typedef struct
{
  char *key;
  char *value;
} oci_kv;

typedef struct
{
  oci_kv *v;
  size_t len;
} oci_map;

/* ---- config.md ---------------------------------------------------------- */

typedef struct
{
  uint32_t container_id;
  uint32_t host_id;
  uint32_t size;
} oci_id_mapping;

typedef struct
{
  char *path;
  bool readonly;
} oci_root;

typedef struct
{
  char *destination; /* required */
  char *source;
  char *type;
  char **options;
  oci_id_mapping *uid_mappings;
  size_t uid_mappings_len;
  oci_id_mapping *gid_mappings;
  size_t gid_mappings_len;
} oci_mount;

typedef struct
{
  uint32_t height;
  uint32_t width;
} oci_console_size;

typedef struct
{
  uint32_t uid;
  uint32_t gid;
  oci_opt_u32 umask;
  uint32_t *additional_gids;
  size_t additional_gids_len;
  char *username; /* Windows only; parsed, ignored */
} oci_user;

typedef struct
{
  char **bounding;
  char **effective;
  char **inheritable;
  char **permitted;
  char **ambient;
} oci_capabilities;

typedef struct
{
  char *type; /* "RLIMIT_NOFILE", ... */
  uint64_t hard;
  uint64_t soft;
} oci_rlimit;

typedef struct
{
  char *policy; /* required: SCHED_OTHER, SCHED_FIFO, ... */
  oci_opt_i32 nice;
  oci_opt_i32 priority;
  char **flags;
  oci_opt_u64 runtime;
  oci_opt_u64 deadline;
  oci_opt_u64 period;
} oci_scheduler;

typedef struct
{
  char *klass; /* "class": IOPRIO_CLASS_RT, IOPRIO_CLASS_BE, IOPRIO_CLASS_IDLE */
  int32_t priority;
} oci_io_priority;

typedef struct
{
  char *initial;
  char *final;
} oci_exec_cpu_affinity;

typedef struct
{
  bool terminal;
  oci_console_size *console_size;
  oci_user user;
  char **args;
  char *command_line; /* Windows only */
  char **env;
  char *cwd; /* required */
  oci_capabilities *capabilities;
  oci_rlimit *rlimits;
  size_t rlimits_len;
  bool no_new_privileges;
  char *apparmor_profile;
  oci_opt_i32 oom_score_adj;
  oci_scheduler *scheduler;
  char *selinux_label;
  oci_io_priority *io_priority;
  oci_exec_cpu_affinity *exec_cpu_affinity;
} oci_process;

typedef struct
{
  char *path; /* required */
  char **args;
  char **env;
  oci_opt_i32 timeout; /* seconds, > 0 */
} oci_hook;

typedef struct
{
  oci_hook *v;
  size_t len;
} oci_hook_list;

typedef struct
{
  oci_hook_list prestart; /* deprecated, still honoured */
  oci_hook_list create_runtime;
  oci_hook_list create_container;
  oci_hook_list start_container;
  oci_hook_list poststart;
  oci_hook_list poststop;
} oci_hooks;

/* ---- config-linux.md ---------------------------------------------------- */

typedef struct
{
  char *type; /* pid, network, mount, ipc, uts, user, cgroup, time */
  char *path;
} oci_namespace;

typedef struct
{
  char *type; /* c, b, u, p */
  char *path;
  int64_t major;
  int64_t minor;
  oci_opt_u32 file_mode;
  oci_opt_u32 uid;
  oci_opt_u32 gid;
} oci_device;

typedef struct
{
  char *clock; /* the key: "monotonic" or "boottime" */
  int64_t secs;
  uint32_t nanosecs;
} oci_time_offset;

typedef struct
{
  bool allow;
  char *type; /* a, c, b; NULL means "a" */
  oci_opt_i64 major;
  oci_opt_i64 minor;
  char *access;
} oci_device_rule;

typedef struct
{
  oci_opt_i64 limit;
  oci_opt_i64 reservation;
  oci_opt_i64 swap;
  oci_opt_i64 kernel;
  oci_opt_i64 kernel_tcp;
  oci_opt_u64 swappiness;
  oci_opt_bool disable_oom_killer;
  oci_opt_bool use_hierarchy;
  oci_opt_bool check_before_update;
} oci_memory;

typedef struct
{
  oci_opt_u64 shares;
  oci_opt_i64 quota;
  oci_opt_u64 burst;
  oci_opt_u64 period;
  oci_opt_i64 realtime_runtime;
  oci_opt_u64 realtime_period;
  char *cpus;
  char *mems;
  oci_opt_i64 idle;
} oci_cpu;

typedef struct
{
  oci_opt_i64 limit;
} oci_pids;

typedef struct
{
  int64_t major;
  int64_t minor;
  oci_opt_u32 weight; /* uint16 in the spec */
  oci_opt_u32 leaf_weight;
} oci_weight_device;

typedef struct
{
  int64_t major;
  int64_t minor;
  uint64_t rate;
} oci_throttle_device;

typedef struct
{
  oci_opt_u32 weight;
  oci_opt_u32 leaf_weight;
  oci_weight_device *weight_device;
  size_t weight_device_len;
  oci_throttle_device *throttle_read_bps_device;
  size_t throttle_read_bps_device_len;
  oci_throttle_device *throttle_write_bps_device;
  size_t throttle_write_bps_device_len;
  oci_throttle_device *throttle_read_iops_device;
  size_t throttle_read_iops_device_len;
  oci_throttle_device *throttle_write_iops_device;
  size_t throttle_write_iops_device_len;
} oci_block_io;

typedef struct
{
  char *page_size; /* "2MB", "1GB", ... */
  uint64_t limit;
} oci_hugepage_limit;

typedef struct
{
  char *name;
  uint32_t priority;
} oci_net_priority;

typedef struct
{
  oci_opt_u32 class_id;
  oci_net_priority *priorities;
  size_t priorities_len;
} oci_network;

typedef struct
{
  char *device; /* the key */
  oci_opt_u32 hca_handles;
  oci_opt_u32 hca_objects;
} oci_rdma;

typedef struct
{
  oci_device_rule *devices;
  size_t devices_len;
  oci_memory *memory;
  oci_cpu *cpu;
  oci_pids *pids;
  oci_block_io *block_io;
  oci_hugepage_limit *hugepage_limits;
  size_t hugepage_limits_len;
  oci_network *network;
  oci_rdma *rdma;
  size_t rdma_len;
  oci_map unified;
} oci_resources;

typedef struct
{
  uint32_t index;
  uint64_t value;
  oci_opt_u64 value_two;
  char *op; /* SCMP_CMP_NE, ..., SCMP_CMP_MASKED_EQ */
} oci_seccomp_arg;

typedef struct
{
  char **names;
  char *action;
  oci_opt_u32 errno_ret;
  oci_seccomp_arg *args;
  size_t args_len;
} oci_seccomp_syscall;

typedef struct
{
  char *default_action; /* required */
  oci_opt_u32 default_errno_ret;
  char **architectures;
  char **flags;
  char *listener_path;
  char *listener_metadata;
  oci_seccomp_syscall *syscalls;
  size_t syscalls_len;
} oci_seccomp;

typedef struct
{
  char *clos_id;
  char *l3_cache_schema;
  char *mem_bw_schema;
  char **schemata;
  bool enable_monitoring;
  bool enable_cmt; /* pre-1.3 names, still accepted */
  bool enable_mbm;
} oci_intel_rdt;

typedef struct
{
  char *domain; /* LINUX, LINUX32 */
  char **flags;
} oci_personality;

typedef struct
{
  char *mode; /* MPOL_DEFAULT, MPOL_BIND, ... */
  char *nodes;
  char **flags;
} oci_memory_policy;

typedef struct
{
  char *host_name; /* the key */
  char *name;      /* name inside the container, default: host_name */
} oci_net_device;

typedef struct
{
  oci_namespace *namespaces;
  size_t namespaces_len;
  oci_id_mapping *uid_mappings;
  size_t uid_mappings_len;
  oci_id_mapping *gid_mappings;
  size_t gid_mappings_len;
  oci_time_offset *time_offsets;
  size_t time_offsets_len;
  oci_device *devices;
  size_t devices_len;
  char *cgroups_path;
  oci_resources *resources;
  char *rootfs_propagation;
  oci_seccomp *seccomp;
  oci_map sysctl;
  char **masked_paths;
  char **readonly_paths;
  char *mount_label;
  oci_intel_rdt *intel_rdt;
  oci_personality *personality;
  oci_memory_policy *memory_policy;
  oci_net_device *net_devices;
  size_t net_devices_len;
} oci_linux;

typedef struct
{
  char *oci_version; /* required */
  oci_process *process;
  oci_root *root;
  char *hostname;
  char *domainname;
  oci_mount *mounts;
  size_t mounts_len;
  oci_hooks *hooks;
  oci_map annotations;
  oci_linux *linux_;
} oci_config;

/* ---- runtime.md: the state of a container ------------------------------- */

typedef struct
{
  char *oci_version;
  char *id;
  char *status; /* creating, created, running, paused, stopped */
  int pid;      /* 0 when there is none */
  char *bundle;
  oci_map annotations;
  /* runc's additions that engines read */
  char *rootfs;
  char *created; /* RFC 3339 with nanoseconds */
  char *owner;
} oci_state;

#endif
