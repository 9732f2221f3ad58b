/* config-linux.md as oj_type descriptions: field names exactly as the
 * runtime-spec (1.0 to 1.3) spells them. */
#include "json.h"
#include "oci-spec/types.h"

/* ---- linux.resources ---------------------------------------------------- */

static const oj_field device_rule_fields[] = {
  OJ_F (oci_device_rule, "allow", OJ_BOOL, allow, .required = true),
  OJ_F (oci_device_rule, "type", OJ_STR, type),
  OJ_F (oci_device_rule, "major", OJ_OPT_I64, major),
  OJ_F (oci_device_rule, "minor", OJ_OPT_I64, minor),
  OJ_F (oci_device_rule, "access", OJ_STR, access),
  OJ_END,
};
static const oj_type device_rule_type
    = { .size = sizeof (oci_device_rule), .fields = device_rule_fields };

static const oj_field memory_fields[] = {
  OJ_F (oci_memory, "limit", OJ_OPT_I64, limit),
  OJ_F (oci_memory, "reservation", OJ_OPT_I64, reservation),
  OJ_F (oci_memory, "swap", OJ_OPT_I64, swap),
  OJ_F (oci_memory, "kernel", OJ_OPT_I64, kernel),
  OJ_F (oci_memory, "kernelTCP", OJ_OPT_I64, kernel_tcp),
  OJ_F (oci_memory, "swappiness", OJ_OPT_U64, swappiness),
  OJ_F (oci_memory, "disableOOMKiller", OJ_OPT_BOOL, disable_oom_killer),
  OJ_F (oci_memory, "useHierarchy", OJ_OPT_BOOL, use_hierarchy),
  OJ_F (oci_memory, "checkBeforeUpdate", OJ_OPT_BOOL, check_before_update),
  OJ_END,
};
static const oj_type memory_type
    = { .size = sizeof (oci_memory), .fields = memory_fields };

static const oj_field cpu_fields[] = {
  OJ_F (oci_cpu, "shares", OJ_OPT_U64, shares),
  OJ_F (oci_cpu, "quota", OJ_OPT_I64, quota),
  OJ_F (oci_cpu, "burst", OJ_OPT_U64, burst),
  OJ_F (oci_cpu, "period", OJ_OPT_U64, period),
  OJ_F (oci_cpu, "realtimeRuntime", OJ_OPT_I64, realtime_runtime),
  OJ_F (oci_cpu, "realtimePeriod", OJ_OPT_U64, realtime_period),
  OJ_F (oci_cpu, "cpus", OJ_STR, cpus),
  OJ_F (oci_cpu, "mems", OJ_STR, mems),
  OJ_F (oci_cpu, "idle", OJ_OPT_I64, idle),
  OJ_END,
};
static const oj_type cpu_type
    = { .size = sizeof (oci_cpu), .fields = cpu_fields };

static const oj_field pids_fields[] = {
  OJ_F (oci_pids, "limit", OJ_OPT_I64, limit),
  OJ_END,
};
static const oj_type pids_type
    = { .size = sizeof (oci_pids), .fields = pids_fields };

/* blkio weights are uint16 in the spec's Go types. */
#define WEIGHT_MAX UINT16_MAX

static const oj_field weight_device_fields[] = {
  OJ_F (oci_weight_device, "major", OJ_I64, major, .required = true),
  OJ_F (oci_weight_device, "minor", OJ_I64, minor, .required = true),
  OJ_F (oci_weight_device, "weight", OJ_OPT_U32, weight, .max = WEIGHT_MAX),
  OJ_F (oci_weight_device, "leafWeight", OJ_OPT_U32, leaf_weight,
        .max = WEIGHT_MAX),
  OJ_END,
};
static const oj_type weight_device_type
    = { .size = sizeof (oci_weight_device), .fields = weight_device_fields };

static const oj_field throttle_device_fields[] = {
  OJ_F (oci_throttle_device, "major", OJ_I64, major, .required = true),
  OJ_F (oci_throttle_device, "minor", OJ_I64, minor, .required = true),
  OJ_F (oci_throttle_device, "rate", OJ_U64, rate, .required = true),
  OJ_END,
};
static const oj_type throttle_device_type = {
  .size = sizeof (oci_throttle_device),
  .fields = throttle_device_fields,
};

static const oj_field block_io_fields[] = {
  OJ_F (oci_block_io, "weight", OJ_OPT_U32, weight, .max = WEIGHT_MAX),
  OJ_F (oci_block_io, "leafWeight", OJ_OPT_U32, leaf_weight,
        .max = WEIGHT_MAX),
  OJ_LIST (oci_block_io, "weightDevice", OJ_ARRAY, weight_device,
           weight_device_len, weight_device_type),
  OJ_LIST (oci_block_io, "throttleReadBpsDevice", OJ_ARRAY,
           throttle_read_bps_device, throttle_read_bps_device_len,
           throttle_device_type),
  OJ_LIST (oci_block_io, "throttleWriteBpsDevice", OJ_ARRAY,
           throttle_write_bps_device, throttle_write_bps_device_len,
           throttle_device_type),
  OJ_LIST (oci_block_io, "throttleReadIOPSDevice", OJ_ARRAY,
           throttle_read_iops_device, throttle_read_iops_device_len,
           throttle_device_type),
  OJ_LIST (oci_block_io, "throttleWriteIOPSDevice", OJ_ARRAY,
           throttle_write_iops_device, throttle_write_iops_device_len,
           throttle_device_type),
  OJ_END,
};
static const oj_type block_io_type
    = { .size = sizeof (oci_block_io), .fields = block_io_fields };

static const oj_field hugepage_limit_fields[] = {
  OJ_F (oci_hugepage_limit, "pageSize", OJ_STR, page_size, .required = true),
  OJ_F (oci_hugepage_limit, "limit", OJ_U64, limit, .required = true),
  OJ_END,
};
static const oj_type hugepage_limit_type
    = { .size = sizeof (oci_hugepage_limit), .fields = hugepage_limit_fields };

static const oj_field net_priority_fields[] = {
  OJ_F (oci_net_priority, "name", OJ_STR, name, .required = true),
  OJ_F (oci_net_priority, "priority", OJ_U32, priority, .required = true),
  OJ_END,
};
static const oj_type net_priority_type
    = { .size = sizeof (oci_net_priority), .fields = net_priority_fields };

static const oj_field network_fields[] = {
  OJ_F (oci_network, "classID", OJ_OPT_U32, class_id),
  OJ_LIST (oci_network, "priorities", OJ_ARRAY, priorities, priorities_len,
           net_priority_type),
  OJ_END,
};
static const oj_type network_type
    = { .size = sizeof (oci_network), .fields = network_fields };

static const oj_field rdma_fields[] = {
  OJ_F (oci_rdma, "hcaHandles", OJ_OPT_U32, hca_handles),
  OJ_F (oci_rdma, "hcaObjects", OJ_OPT_U32, hca_objects),
  OJ_END,
};
static const oj_type rdma_type = {
  .size = sizeof (oci_rdma),
  .fields = rdma_fields,
  .keyed = true,
  .key_offset = offsetof (oci_rdma, device),
};

static const oj_field resources_fields[] = {
  OJ_LIST (oci_resources, "devices", OJ_ARRAY, devices, devices_len,
           device_rule_type),
  OJ_SUB (oci_resources, "memory", OJ_OBJ, memory, memory_type),
  OJ_SUB (oci_resources, "cpu", OJ_OBJ, cpu, cpu_type),
  OJ_SUB (oci_resources, "pids", OJ_OBJ, pids, pids_type),
  OJ_SUB (oci_resources, "blockIO", OJ_OBJ, block_io, block_io_type),
  OJ_LIST (oci_resources, "hugepageLimits", OJ_ARRAY, hugepage_limits,
           hugepage_limits_len, hugepage_limit_type),
  OJ_SUB (oci_resources, "network", OJ_OBJ, network, network_type),
  OJ_LIST (oci_resources, "rdma", OJ_KEYED, rdma, rdma_len, rdma_type),
  OJ_F (oci_resources, "unified", OJ_MAP, unified),
  OJ_END,
};
const oj_type oci_resources_type
    = { .size = sizeof (oci_resources), .fields = resources_fields };

/* ---- linux.seccomp ------------------------------------------------------ */

static const oj_field seccomp_arg_fields[] = {
  OJ_F (oci_seccomp_arg, "index", OJ_U32, index, .required = true),
  OJ_F (oci_seccomp_arg, "value", OJ_U64, value, .required = true),
  OJ_F (oci_seccomp_arg, "valueTwo", OJ_OPT_U64, value_two),
  OJ_F (oci_seccomp_arg, "op", OJ_STR, op, .required = true),
  OJ_END,
};
static const oj_type seccomp_arg_type
    = { .size = sizeof (oci_seccomp_arg), .fields = seccomp_arg_fields };

static const oj_field seccomp_syscall_fields[] = {
  OJ_F (oci_seccomp_syscall, "names", OJ_STRV, names, .required = true),
  OJ_F (oci_seccomp_syscall, "action", OJ_STR, action, .required = true),
  OJ_F (oci_seccomp_syscall, "errnoRet", OJ_OPT_U32, errno_ret),
  OJ_LIST (oci_seccomp_syscall, "args", OJ_ARRAY, args, args_len,
           seccomp_arg_type),
  OJ_END,
};
static const oj_type seccomp_syscall_type = {
  .size = sizeof (oci_seccomp_syscall),
  .fields = seccomp_syscall_fields,
};

static const oj_field seccomp_fields[] = {
  OJ_F (oci_seccomp, "defaultAction", OJ_STR, default_action,
        .required = true),
  OJ_F (oci_seccomp, "defaultErrnoRet", OJ_OPT_U32, default_errno_ret),
  OJ_F (oci_seccomp, "architectures", OJ_STRV, architectures),
  OJ_F (oci_seccomp, "flags", OJ_STRV, flags),
  OJ_F (oci_seccomp, "listenerPath", OJ_STR, listener_path),
  OJ_F (oci_seccomp, "listenerMetadata", OJ_STR, listener_metadata),
  OJ_LIST (oci_seccomp, "syscalls", OJ_ARRAY, syscalls, syscalls_len,
           seccomp_syscall_type),
  OJ_END,
};
const oj_type oci_seccomp_type
    = { .size = sizeof (oci_seccomp), .fields = seccomp_fields };

/* ---- the rest of linux -------------------------------------------------- */

static const oj_field namespace_fields[] = {
  OJ_F (oci_namespace, "type", OJ_STR, type, .required = true),
  OJ_F (oci_namespace, "path", OJ_STR, path),
  OJ_END,
};
static const oj_type namespace_type
    = { .size = sizeof (oci_namespace), .fields = namespace_fields };

static const oj_field time_offset_fields[] = {
  OJ_F (oci_time_offset, "secs", OJ_I64, secs),
  OJ_F (oci_time_offset, "nanosecs", OJ_U32, nanosecs),
  OJ_END,
};
static const oj_type time_offset_type = {
  .size = sizeof (oci_time_offset),
  .fields = time_offset_fields,
  .keyed = true,
  .key_offset = offsetof (oci_time_offset, clock),
};

static const oj_field device_fields[] = {
  OJ_F (oci_device, "type", OJ_STR, type, .required = true),
  OJ_F (oci_device, "path", OJ_STR, path, .required = true),
  OJ_F (oci_device, "major", OJ_I64, major),
  OJ_F (oci_device, "minor", OJ_I64, minor),
  OJ_F (oci_device, "fileMode", OJ_OPT_U32, file_mode),
  OJ_F (oci_device, "uid", OJ_OPT_U32, uid),
  OJ_F (oci_device, "gid", OJ_OPT_U32, gid),
  OJ_END,
};
static const oj_type device_type
    = { .size = sizeof (oci_device), .fields = device_fields };

static const oj_field intel_rdt_fields[] = {
  OJ_F (oci_intel_rdt, "closID", OJ_STR, clos_id),
  OJ_F (oci_intel_rdt, "l3CacheSchema", OJ_STR, l3_cache_schema),
  OJ_F (oci_intel_rdt, "memBwSchema", OJ_STR, mem_bw_schema),
  OJ_F (oci_intel_rdt, "schemata", OJ_STRV, schemata),
  OJ_F (oci_intel_rdt, "enableMonitoring", OJ_BOOL, enable_monitoring),
  OJ_F (oci_intel_rdt, "enableCMT", OJ_BOOL, enable_cmt),
  OJ_F (oci_intel_rdt, "enableMBM", OJ_BOOL, enable_mbm),
  OJ_END,
};
static const oj_type intel_rdt_type
    = { .size = sizeof (oci_intel_rdt), .fields = intel_rdt_fields };

static const oj_field personality_fields[] = {
  OJ_F (oci_personality, "domain", OJ_STR, domain, .required = true),
  OJ_F (oci_personality, "flags", OJ_STRV, flags),
  OJ_END,
};
static const oj_type personality_type
    = { .size = sizeof (oci_personality), .fields = personality_fields };

static const oj_field memory_policy_fields[] = {
  OJ_F (oci_memory_policy, "mode", OJ_STR, mode, .required = true),
  OJ_F (oci_memory_policy, "nodes", OJ_STR, nodes),
  OJ_F (oci_memory_policy, "flags", OJ_STRV, flags),
  OJ_END,
};
static const oj_type memory_policy_type
    = { .size = sizeof (oci_memory_policy), .fields = memory_policy_fields };

static const oj_field net_device_fields[] = {
  OJ_F (oci_net_device, "name", OJ_STR, name),
  OJ_END,
};
static const oj_type net_device_type = {
  .size = sizeof (oci_net_device),
  .fields = net_device_fields,
  .keyed = true,
  .key_offset = offsetof (oci_net_device, host_name),
};

static const oj_field linux_fields[] = {
  OJ_LIST (oci_linux, "namespaces", OJ_ARRAY, namespaces, namespaces_len,
           namespace_type),
  OJ_LIST (oci_linux, "uidMappings", OJ_ARRAY, uid_mappings,
           uid_mappings_len, oci_id_mapping_type),
  OJ_LIST (oci_linux, "gidMappings", OJ_ARRAY, gid_mappings,
           gid_mappings_len, oci_id_mapping_type),
  OJ_LIST (oci_linux, "timeOffsets", OJ_KEYED, time_offsets,
           time_offsets_len, time_offset_type),
  OJ_LIST (oci_linux, "devices", OJ_ARRAY, devices, devices_len, device_type),
  OJ_F (oci_linux, "cgroupsPath", OJ_STR, cgroups_path),
  OJ_SUB (oci_linux, "resources", OJ_OBJ, resources, oci_resources_type),
  OJ_F (oci_linux, "rootfsPropagation", OJ_STR, rootfs_propagation),
  OJ_SUB (oci_linux, "seccomp", OJ_OBJ, seccomp, oci_seccomp_type),
  OJ_F (oci_linux, "sysctl", OJ_MAP, sysctl),
  OJ_F (oci_linux, "maskedPaths", OJ_STRV, masked_paths),
  OJ_F (oci_linux, "readonlyPaths", OJ_STRV, readonly_paths),
  OJ_F (oci_linux, "mountLabel", OJ_STR, mount_label),
  OJ_SUB (oci_linux, "intelRdt", OJ_OBJ, intel_rdt, intel_rdt_type),
  OJ_SUB (oci_linux, "personality", OJ_OBJ, personality, personality_type),
  OJ_SUB (oci_linux, "memoryPolicy", OJ_OBJ, memory_policy,
          memory_policy_type),
  OJ_LIST (oci_linux, "netDevices", OJ_KEYED, net_devices, net_devices_len,
           net_device_type),
  OJ_END,
};
const oj_type oci_linux_type
    = { .size = sizeof (oci_linux), .fields = linux_fields };
