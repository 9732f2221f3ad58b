/* config.md and runtime.md's state as oj_type descriptions. */
#include "json.h"
#include "oci-spec/types.h"

static const oj_field id_mapping_fields[] = {
  OJ_F (oci_id_mapping, "containerID", OJ_U32, container_id, .required = true),
  OJ_F (oci_id_mapping, "hostID", OJ_U32, host_id, .required = true),
  OJ_F (oci_id_mapping, "size", OJ_U32, size, .required = true),
  OJ_END,
};
const oj_type oci_id_mapping_type
    = { .size = sizeof (oci_id_mapping), .fields = id_mapping_fields };

static const oj_field root_fields[] = {
  OJ_F (oci_root, "path", OJ_STR, path, .required = true),
  OJ_F (oci_root, "readonly", OJ_BOOL, readonly),
  OJ_END,
};
static const oj_type root_type
    = { .size = sizeof (oci_root), .fields = root_fields };

static const oj_field mount_fields[] = {
  OJ_F (oci_mount, "destination", OJ_STR, destination, .required = true),
  OJ_F (oci_mount, "source", OJ_STR, source),
  OJ_F (oci_mount, "type", OJ_STR, type),
  OJ_F (oci_mount, "options", OJ_STRV, options),
  OJ_LIST (oci_mount, "uidMappings", OJ_ARRAY, uid_mappings,
           uid_mappings_len, oci_id_mapping_type),
  OJ_LIST (oci_mount, "gidMappings", OJ_ARRAY, gid_mappings,
           gid_mappings_len, oci_id_mapping_type),
  OJ_END,
};
static const oj_type mount_type
    = { .size = sizeof (oci_mount), .fields = mount_fields };

/* ---- process ------------------------------------------------------------ */

static const oj_field console_size_fields[] = {
  OJ_F (oci_console_size, "height", OJ_U32, height, .required = true),
  OJ_F (oci_console_size, "width", OJ_U32, width, .required = true),
  OJ_END,
};
static const oj_type console_size_type
    = { .size = sizeof (oci_console_size), .fields = console_size_fields };

/* uid and gid are REQUIRED by the spec but runc (Go) takes a missing one as
 * 0; so do we, engines omit them for root. */
static const oj_field user_fields[] = {
  OJ_F (oci_user, "uid", OJ_U32, uid),
  OJ_F (oci_user, "gid", OJ_U32, gid),
  OJ_F (oci_user, "umask", OJ_OPT_U32, umask),
  OJ_F (oci_user, "additionalGids", OJ_U32V, additional_gids,
        .len_offset = offsetof (oci_user, additional_gids_len)),
  OJ_F (oci_user, "username", OJ_STR, username),
  OJ_END,
};
static const oj_type user_type
    = { .size = sizeof (oci_user), .fields = user_fields };

static const oj_field capabilities_fields[] = {
  OJ_F (oci_capabilities, "bounding", OJ_STRV, bounding),
  OJ_F (oci_capabilities, "effective", OJ_STRV, effective),
  OJ_F (oci_capabilities, "inheritable", OJ_STRV, inheritable),
  OJ_F (oci_capabilities, "permitted", OJ_STRV, permitted),
  OJ_F (oci_capabilities, "ambient", OJ_STRV, ambient),
  OJ_END,
};
static const oj_type capabilities_type
    = { .size = sizeof (oci_capabilities), .fields = capabilities_fields };

static const oj_field rlimit_fields[] = {
  OJ_F (oci_rlimit, "type", OJ_STR, type, .required = true),
  OJ_F (oci_rlimit, "hard", OJ_U64, hard, .required = true),
  OJ_F (oci_rlimit, "soft", OJ_U64, soft, .required = true),
  OJ_END,
};
static const oj_type rlimit_type
    = { .size = sizeof (oci_rlimit), .fields = rlimit_fields };

static const oj_field scheduler_fields[] = {
  OJ_F (oci_scheduler, "policy", OJ_STR, policy, .required = true),
  OJ_F (oci_scheduler, "nice", OJ_OPT_I32, nice),
  OJ_F (oci_scheduler, "priority", OJ_OPT_I32, priority),
  OJ_F (oci_scheduler, "flags", OJ_STRV, flags),
  OJ_F (oci_scheduler, "runtime", OJ_OPT_U64, runtime),
  OJ_F (oci_scheduler, "deadline", OJ_OPT_U64, deadline),
  OJ_F (oci_scheduler, "period", OJ_OPT_U64, period),
  OJ_END,
};
static const oj_type scheduler_type
    = { .size = sizeof (oci_scheduler), .fields = scheduler_fields };

static const oj_field io_priority_fields[] = {
  OJ_F (oci_io_priority, "class", OJ_STR, klass, .required = true),
  OJ_F (oci_io_priority, "priority", OJ_I32, priority),
  OJ_END,
};
static const oj_type io_priority_type
    = { .size = sizeof (oci_io_priority), .fields = io_priority_fields };

static const oj_field exec_cpu_affinity_fields[] = {
  OJ_F (oci_exec_cpu_affinity, "initial", OJ_STR, initial),
  OJ_F (oci_exec_cpu_affinity, "final", OJ_STR, final),
  OJ_END,
};
static const oj_type exec_cpu_affinity_type = {
  .size = sizeof (oci_exec_cpu_affinity),
  .fields = exec_cpu_affinity_fields,
};

/* cwd is required in config.json only: oci_config_check enforces it. */
static const oj_field process_fields[] = {
  OJ_F (oci_process, "terminal", OJ_BOOL, terminal),
  OJ_SUB (oci_process, "consoleSize", OJ_OBJ, console_size,
          console_size_type),
  OJ_SUB (oci_process, "user", OJ_INLINE, user, user_type),
  OJ_F (oci_process, "args", OJ_STRV, args),
  OJ_F (oci_process, "commandLine", OJ_STR, command_line),
  OJ_F (oci_process, "env", OJ_STRV, env),
  OJ_F (oci_process, "cwd", OJ_STR, cwd),
  OJ_SUB (oci_process, "capabilities", OJ_OBJ, capabilities,
          capabilities_type),
  OJ_LIST (oci_process, "rlimits", OJ_ARRAY, rlimits, rlimits_len,
           rlimit_type),
  OJ_F (oci_process, "noNewPrivileges", OJ_BOOL, no_new_privileges),
  OJ_F (oci_process, "apparmorProfile", OJ_STR, apparmor_profile),
  OJ_F (oci_process, "oomScoreAdj", OJ_OPT_I32, oom_score_adj),
  OJ_SUB (oci_process, "scheduler", OJ_OBJ, scheduler, scheduler_type),
  OJ_F (oci_process, "selinuxLabel", OJ_STR, selinux_label),
  OJ_SUB (oci_process, "ioPriority", OJ_OBJ, io_priority, io_priority_type),
  OJ_SUB (oci_process, "execCPUAffinity", OJ_OBJ, exec_cpu_affinity,
          exec_cpu_affinity_type),
  OJ_END,
};
const oj_type oci_process_type
    = { .size = sizeof (oci_process), .fields = process_fields };

/* ---- hooks -------------------------------------------------------------- */

static const oj_field hook_fields[] = {
  OJ_F (oci_hook, "path", OJ_STR, path, .required = true),
  OJ_F (oci_hook, "args", OJ_STRV, args),
  OJ_F (oci_hook, "env", OJ_STRV, env),
  OJ_F (oci_hook, "timeout", OJ_OPT_I32, timeout),
  OJ_END,
};
static const oj_type hook_type = {
  .size = sizeof (oci_hook),
  .fields = hook_fields,
  .check = oci_hook_check,
};

#define HOOK_LIST(json, m)                                                    \
  OJ_LIST (oci_hooks, json, OJ_ARRAY, m.v, m.len, hook_type)

static const oj_field hooks_fields[] = {
  HOOK_LIST ("prestart", prestart),
  HOOK_LIST ("createRuntime", create_runtime),
  HOOK_LIST ("createContainer", create_container),
  HOOK_LIST ("startContainer", start_container),
  HOOK_LIST ("poststart", poststart),
  HOOK_LIST ("poststop", poststop),
  OJ_END,
};
static const oj_type hooks_type
    = { .size = sizeof (oci_hooks), .fields = hooks_fields };

/* ---- the documents ------------------------------------------------------ */

static const oj_field config_fields[] = {
  OJ_F (oci_config, "ociVersion", OJ_STR, oci_version, .required = true),
  OJ_SUB (oci_config, "process", OJ_OBJ, process, oci_process_type),
  OJ_SUB (oci_config, "root", OJ_OBJ, root, root_type),
  OJ_F (oci_config, "hostname", OJ_STR, hostname),
  OJ_F (oci_config, "domainname", OJ_STR, domainname),
  OJ_LIST (oci_config, "mounts", OJ_ARRAY, mounts, mounts_len, mount_type),
  OJ_SUB (oci_config, "hooks", OJ_OBJ, hooks, hooks_type),
  OJ_F (oci_config, "annotations", OJ_MAP, annotations),
  OJ_SUB (oci_config, "linux", OJ_OBJ, linux_, oci_linux_type),
  OJ_END,
};
const oj_type oci_config_type = {
  .size = sizeof (oci_config),
  .fields = config_fields,
  .check = oci_config_check,
};

_Static_assert (sizeof (int) == sizeof (int32_t), "oci_state.pid is OJ_I32");

static const oj_field state_fields[] = {
  OJ_F (oci_state, "ociVersion", OJ_STR, oci_version, .required = true),
  OJ_F (oci_state, "id", OJ_STR, id, .required = true),
  OJ_F (oci_state, "status", OJ_STR, status, .required = true),
  OJ_F (oci_state, "pid", OJ_I32, pid),
  OJ_F (oci_state, "bundle", OJ_STR, bundle, .required = true),
  OJ_F (oci_state, "annotations", OJ_MAP, annotations),
  OJ_F (oci_state, "rootfs", OJ_STR, rootfs),
  OJ_F (oci_state, "created", OJ_STR, created),
  OJ_F (oci_state, "owner", OJ_STR, owner),
  OJ_END,
};
const oj_type oci_state_type
    = { .size = sizeof (oci_state), .fields = state_fields };
