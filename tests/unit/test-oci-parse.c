/* Tests of the OCI parser and state serialiser (oci-spec/).  Documents are
 * written with ' for " to stay readable; J() swaps them back. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oci-spec/oci-spec.h"
#include "sandrun/util.h"
#include "unit.h"

static char *
J (const char *s)
{
  char *d = xstrdup (s);
  for (char *p = d; *p; p++)
    if (*p == '\'')
      *p = '"';
  return d;
}

static oci_config *
parse (const char *doc, sr_error **err)
{
  _cleanup_free_ char *d = J (doc);
  return oci_config_parse_data (d, strlen (d), err);
}

/* A minimal valid config with `extra` spliced in as more top-level fields. */
static char *
with (const char *extra)
{
  return xasprintf ("{'ociVersion': '1.2.0'%s%s}", *extra ? ", " : "", extra);
}

/* Parse must fail with exactly `want`. */
static void
expect_error (const char *extra, const char *want)
{
  _cleanup_free_ char *doc = with (extra);
  sr_error *err = NULL;
  oci_config *c = parse (doc, &err);
  CHECK (c == NULL && err != NULL, "rejected: %s", extra);
  CHECK_STR (err ? err->msg : NULL, want, "message for: %.60s", extra);
  oci_config_free (c);
  sr_error_free (err);
}

static void
expect_doc_error (const char *doc, const char *want_prefix)
{
  sr_error *err = NULL;
  oci_config *c = oci_config_parse_data (doc, strlen (doc), &err);
  CHECK (c == NULL && err != NULL, "document rejected with \"%s\"",
         want_prefix);
  const char *msg = err ? err->msg : "";
  CHECK (str_has_prefix (msg, want_prefix), "message \"%s\" starts with \"%s\"",
         msg, want_prefix);
  CHECK (strchr (msg, '\n') == NULL, "message is one line");
  oci_config_free (c);
  sr_error_free (err);
}

static oci_config *
expect_ok (const char *extra)
{
  _cleanup_free_ char *doc = with (extra);
  sr_error *err = NULL;
  oci_config *c = parse (doc, &err);
  CHECK (c != NULL, "accepted: %.70s%s%s", extra, err ? " -- " : "",
         err ? err->msg : "");
  sr_error_free (err);
  return c;
}

static bool
strv_is (char **v, const char *const *want)
{
  size_t i = 0;
  for (; want[i] != NULL; i++)
    if (v == NULL || v[i] == NULL || strcmp (v[i], want[i]) != 0)
      return false;
  return v != NULL && v[i] == NULL;
}
#define STRV_IS(v, ...) strv_is ((v), (const char *const[]){ __VA_ARGS__, NULL })

/* ---- a config using every field ----------------------------------------- */

static const char full_config[] = "{"
  "'ociVersion': '1.3.0',"
  "'process': {"
  "  'terminal': true,"
  "  'consoleSize': {'height': 25, 'width': 80},"
  "  'user': {'uid': 1000, 'gid': 1001, 'umask': 18,"
  "           'additionalGids': [5, 4294967295], 'username': 'me'},"
  "  'args': ['sh', '-c', 'echo hi'],"
  "  'commandLine': 'cmd.exe',"
  "  'env': ['PATH=/bin', 'TERM=xterm'],"
  "  'cwd': '/work',"
  "  'capabilities': {'bounding': ['CAP_A'], 'effective': ['CAP_B'],"
  "     'inheritable': [], 'permitted': ['CAP_C', 'CAP_D'], 'ambient': ['CAP_E']},"
  "  'rlimits': [{'type': 'RLIMIT_NOFILE', 'hard': 18446744073709551615, 'soft': 1024},"
  "              {'type': 'RLIMIT_CORE', 'hard': 0, 'soft': 0}],"
  "  'noNewPrivileges': true,"
  "  'apparmorProfile': 'aa-prof',"
  "  'oomScoreAdj': -1000,"
  "  'scheduler': {'policy': 'SCHED_DEADLINE', 'nice': -5, 'priority': 3,"
  "     'flags': ['SCHED_FLAG_RESET_ON_FORK'], 'runtime': 10, 'deadline': 20, 'period': 30},"
  "  'selinuxLabel': 'system_u:system_r:container_t:s0',"
  "  'ioPriority': {'class': 'IOPRIO_CLASS_BE', 'priority': 4},"
  "  'execCPUAffinity': {'initial': '0-1', 'final': '2'}"
  "},"
  "'root': {'path': 'rootfs', 'readonly': true},"
  "'hostname': 'box',"
  "'domainname': 'example.org',"
  "'mounts': ["
  "  {'destination': '/proc', 'type': 'proc', 'source': 'proc'},"
  "  {'destination': '/data', 'type': 'bind', 'source': '/srv/data',"
  "   'options': ['rbind', 'ro', 'idmap'],"
  "   'uidMappings': [{'containerID': 0, 'hostID': 100000, 'size': 65536}],"
  "   'gidMappings': [{'containerID': 1, 'hostID': 200000, 'size': 10}]}"
  "],"
  "'hooks': {"
  "  'prestart': [{'path': '/bin/pre', 'args': ['pre', '1'], 'env': ['A=1'], 'timeout': 5}],"
  "  'createRuntime': [{'path': '/bin/cr'}, {'path': '/bin/cr2'}],"
  "  'createContainer': [{'path': '/bin/cc'}],"
  "  'startContainer': [{'path': '/bin/sc'}],"
  "  'poststart': [{'path': '/bin/ps'}],"
  "  'poststop': [{'path': '/bin/pst', 'timeout': 1}]"
  "},"
  "'annotations': {'org.example.a': 'x', 'b': 'y'},"
  "'linux': {"
  "  'namespaces': [{'type': 'pid'}, {'type': 'network', 'path': '/var/run/netns/n'},"
  "                 {'type': 'time'}],"
  "  'uidMappings': [{'containerID': 0, 'hostID': 1000, 'size': 1}],"
  "  'gidMappings': [{'containerID': 0, 'hostID': 1001, 'size': 2},"
  "                  {'containerID': 5, 'hostID': 4294967295, 'size': 4294967295}],"
  "  'timeOffsets': {'monotonic': {'secs': -86400, 'nanosecs': 999999999},"
  "                  'boottime': {'secs': 9223372036854775807}},"
  "  'devices': [{'type': 'c', 'path': '/dev/fuse', 'major': 10, 'minor': 229,"
  "               'fileMode': 438, 'uid': 0, 'gid': 5},"
  "              {'type': 'p', 'path': '/dev/fifo'}],"
  "  'cgroupsPath': '/machine/box',"
  "  'resources': {"
  "    'devices': [{'allow': false, 'access': 'rwm'},"
  "                {'allow': true, 'type': 'c', 'major': 1, 'minor': -1, 'access': 'rw'}],"
  "    'memory': {'limit': -1, 'reservation': 1048576, 'swap': 9223372036854775807,"
  "               'kernel': -9223372036854775808, 'kernelTCP': 7, 'swappiness': 60,"
  "               'disableOOMKiller': true, 'useHierarchy': false, 'checkBeforeUpdate': true},"
  "    'cpu': {'shares': 1024, 'quota': -1, 'burst': 5, 'period': 100000,"
  "            'realtimeRuntime': 950000, 'realtimePeriod': 1000000,"
  "            'cpus': '0-3', 'mems': '0', 'idle': 1},"
  "    'pids': {'limit': 32771},"
  "    'blockIO': {'weight': 500, 'leafWeight': 65535,"
  "      'weightDevice': [{'major': 8, 'minor': 0, 'weight': 600, 'leafWeight': 300},"
  "                       {'major': 8, 'minor': 16}],"
  "      'throttleReadBpsDevice': [{'major': 8, 'minor': 0, 'rate': 600}],"
  "      'throttleWriteBpsDevice': [{'major': 8, 'minor': 1, 'rate': 18446744073709551615}],"
  "      'throttleReadIOPSDevice': [{'major': 8, 'minor': 2, 'rate': 300}],"
  "      'throttleWriteIOPSDevice': [{'major': 8, 'minor': 3, 'rate': 301},"
  "                                  {'major': 9, 'minor': 4, 'rate': 302}]},"
  "    'hugepageLimits': [{'pageSize': '2MB', 'limit': 209715200},"
  "                       {'pageSize': '1GB', 'limit': 0}],"
  "    'network': {'classID': 1048577,"
  "                'priorities': [{'name': 'eth0', 'priority': 500}, {'name': 'eth1', 'priority': 1000}]},"
  "    'rdma': {'mlx5_1': {'hcaHandles': 3, 'hcaObjects': 10000}, 'rxe3': {'hcaObjects': 7}},"
  "    'unified': {'io.max': '259:0 rbps=2097152', 'memory.high': 'max'}"
  "  },"
  "  'rootfsPropagation': 'rslave',"
  "  'seccomp': {"
  "    'defaultAction': 'SCMP_ACT_ERRNO', 'defaultErrnoRet': 1,"
  "    'architectures': ['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86'],"
  "    'flags': ['SECCOMP_FILTER_FLAG_LOG'],"
  "    'listenerPath': '/run/seccomp.sock', 'listenerMetadata': 'meta',"
  "    'syscalls': ["
  "      {'names': ['read', 'write'], 'action': 'SCMP_ACT_ALLOW'},"
  "      {'names': ['personality'], 'action': 'SCMP_ACT_ALLOW',"
  "       'args': [{'index': 0, 'value': 8, 'op': 'SCMP_CMP_EQ'},"
  "                {'index': 1, 'value': 18446744073709551615, 'valueTwo': 4,"
  "                 'op': 'SCMP_CMP_MASKED_EQ'}]},"
  "      {'names': ['mount'], 'action': 'SCMP_ACT_ERRNO', 'errnoRet': 38}"
  "    ]"
  "  },"
  "  'sysctl': {'net.ipv4.ip_forward': '1', 'kernel.shmmax': '4096'},"
  "  'maskedPaths': ['/proc/kcore', '/proc/keys'],"
  "  'readonlyPaths': ['/proc/sys'],"
  "  'mountLabel': 'system_u:object_r:container_file_t:s0',"
  "  'intelRdt': {'closID': 'guaranteed', 'l3CacheSchema': 'L3:0=7f0',"
  "               'memBwSchema': 'MB:0=20', 'schemata': ['L2:0=ff', 'L3:0=f'],"
  "               'enableMonitoring': true, 'enableCMT': true, 'enableMBM': false},"
  "  'personality': {'domain': 'LINUX32', 'flags': []},"
  "  'memoryPolicy': {'mode': 'MPOL_INTERLEAVE', 'nodes': '0-1',"
  "                   'flags': ['MPOL_F_STATIC_NODES']},"
  "  'netDevices': {'eth9': {'name': 'ctr0'}, 'eth8': {}}"
  "},"
  "'unknownTopLevel': {'deep': [1, 2, {'x': null}]},"
  "'windows': {'layerFolders': ['C:']}"
  "}";

static void
check_process (const oci_process *p)
{
  CHECK (p->terminal, "process.terminal");
  CHECK (p->console_size && p->console_size->height == 25
             && p->console_size->width == 80,
         "process.consoleSize");
  CHECK (p->user.uid == 1000 && p->user.gid == 1001, "process.user uid/gid");
  CHECK (p->user.umask.set && p->user.umask.value == 18, "process.user.umask");
  CHECK (p->user.additional_gids_len == 2 && p->user.additional_gids[0] == 5
             && p->user.additional_gids[1] == UINT32_MAX,
         "process.user.additionalGids");
  CHECK_STR (p->user.username, "me", "process.user.username");
  CHECK (STRV_IS (p->args, "sh", "-c", "echo hi"), "process.args");
  CHECK_STR (p->command_line, "cmd.exe", "process.commandLine");
  CHECK (STRV_IS (p->env, "PATH=/bin", "TERM=xterm"), "process.env");
  CHECK_STR (p->cwd, "/work", "process.cwd");
  const oci_capabilities *caps = p->capabilities;
  CHECK (caps && STRV_IS (caps->bounding, "CAP_A")
             && STRV_IS (caps->effective, "CAP_B")
             && caps->inheritable && caps->inheritable[0] == NULL
             && STRV_IS (caps->permitted, "CAP_C", "CAP_D")
             && STRV_IS (caps->ambient, "CAP_E"),
         "process.capabilities (an empty array is a non-NULL empty vector)");
  CHECK (p->rlimits_len == 2, "process.rlimits count");
  CHECK_STR (p->rlimits[0].type, "RLIMIT_NOFILE", "rlimits[0].type");
  CHECK (p->rlimits[0].hard == UINT64_MAX, "rlimits[0].hard is UINT64_MAX");
  CHECK (p->rlimits[0].soft == 1024, "rlimits[0].soft");
  CHECK (p->rlimits[1].hard == 0 && p->rlimits[1].soft == 0,
         "rlimits[1] zeros");
  CHECK (p->no_new_privileges, "process.noNewPrivileges");
  CHECK_STR (p->apparmor_profile, "aa-prof", "process.apparmorProfile");
  CHECK (p->oom_score_adj.set && p->oom_score_adj.value == -1000,
         "process.oomScoreAdj");
  const oci_scheduler *s = p->scheduler;
  CHECK (s != NULL, "process.scheduler present");
  CHECK_STR (s->policy, "SCHED_DEADLINE", "scheduler.policy");
  CHECK (s->nice.set && s->nice.value == -5 && s->priority.set
             && s->priority.value == 3,
         "scheduler.nice/priority");
  CHECK (STRV_IS (s->flags, "SCHED_FLAG_RESET_ON_FORK"), "scheduler.flags");
  CHECK (s->runtime.value == 10 && s->deadline.value == 20
             && s->period.value == 30 && s->runtime.set && s->deadline.set
             && s->period.set,
         "scheduler.runtime/deadline/period");
  CHECK_STR (p->selinux_label, "system_u:system_r:container_t:s0",
             "process.selinuxLabel");
  CHECK (p->io_priority && p->io_priority->priority == 4,
         "process.ioPriority.priority");
  CHECK_STR (p->io_priority->klass, "IOPRIO_CLASS_BE", "ioPriority.class");
  CHECK (p->exec_cpu_affinity != NULL, "process.execCPUAffinity present");
  CHECK_STR (p->exec_cpu_affinity->initial, "0-1", "execCPUAffinity.initial");
  CHECK_STR (p->exec_cpu_affinity->final, "2", "execCPUAffinity.final");
}

static void
check_mounts_hooks (const oci_config *c)
{
  CHECK (c->mounts_len == 2, "mounts count");
  CHECK_STR (c->mounts[0].destination, "/proc", "mounts[0].destination");
  CHECK_STR (c->mounts[0].type, "proc", "mounts[0].type");
  CHECK_STR (c->mounts[0].source, "proc", "mounts[0].source");
  CHECK (c->mounts[0].options == NULL, "mounts[0].options absent -> NULL");
  CHECK (STRV_IS (c->mounts[1].options, "rbind", "ro", "idmap"),
         "mounts[1].options");
  CHECK (c->mounts[1].uid_mappings_len == 1
             && c->mounts[1].uid_mappings[0].container_id == 0
             && c->mounts[1].uid_mappings[0].host_id == 100000
             && c->mounts[1].uid_mappings[0].size == 65536,
         "mounts[1].uidMappings");
  CHECK (c->mounts[1].gid_mappings_len == 1
             && c->mounts[1].gid_mappings[0].container_id == 1
             && c->mounts[1].gid_mappings[0].host_id == 200000
             && c->mounts[1].gid_mappings[0].size == 10,
         "mounts[1].gidMappings");

  const oci_hooks *h = c->hooks;
  CHECK (h != NULL, "hooks present");
  CHECK (h->prestart.len == 1 && h->prestart.v[0].timeout.set
             && h->prestart.v[0].timeout.value == 5,
         "hooks.prestart timeout");
  CHECK_STR (h->prestart.v[0].path, "/bin/pre", "hooks.prestart path");
  CHECK (STRV_IS (h->prestart.v[0].args, "pre", "1")
             && STRV_IS (h->prestart.v[0].env, "A=1"),
         "hooks.prestart args/env");
  CHECK (h->create_runtime.len == 2, "hooks.createRuntime count");
  CHECK_STR (h->create_runtime.v[1].path, "/bin/cr2", "createRuntime[1]");
  CHECK (!h->create_runtime.v[0].timeout.set, "timeout unset when absent");
  CHECK_STR (h->create_container.v[0].path, "/bin/cc", "createContainer");
  CHECK_STR (h->start_container.v[0].path, "/bin/sc", "startContainer");
  CHECK_STR (h->poststart.v[0].path, "/bin/ps", "poststart");
  CHECK (h->poststop.len == 1 && h->poststop.v[0].timeout.value == 1,
         "poststop");
  CHECK (c->annotations.len == 2, "annotations count");
  CHECK_STR (oci_map_get (&c->annotations, "org.example.a"), "x",
             "annotations value");
  CHECK_STR (c->annotations.v[1].key, "b", "annotations keep document order");
  CHECK (oci_map_get (&c->annotations, "nope") == NULL, "oci_map_get miss");
}

static void
check_resources (const oci_resources *r)
{
  CHECK (r->devices_len == 2 && !r->devices[0].allow
             && r->devices[0].type == NULL && !r->devices[0].major.set,
         "resources.devices[0] (deny all)");
  CHECK (r->devices[1].allow && r->devices[1].major.value == 1
             && r->devices[1].minor.set && r->devices[1].minor.value == -1,
         "resources.devices[1]");
  CHECK_STR (r->devices[1].access, "rw", "resources.devices[1].access");
  const oci_memory *m = r->memory;
  CHECK (m && m->limit.set && m->limit.value == -1, "memory.limit -1");
  CHECK (m->reservation.value == 1048576, "memory.reservation");
  CHECK (m->swap.value == INT64_MAX && m->kernel.value == INT64_MIN,
         "memory.swap/kernel at int64 bounds");
  CHECK (m->kernel_tcp.value == 7 && m->swappiness.set
             && m->swappiness.value == 60,
         "memory.kernelTCP/swappiness");
  CHECK (m->disable_oom_killer.set && m->disable_oom_killer.value
             && m->use_hierarchy.set && !m->use_hierarchy.value
             && m->check_before_update.value,
         "memory booleans");
  const oci_cpu *cpu = r->cpu;
  CHECK (cpu && cpu->shares.value == 1024 && cpu->quota.value == -1
             && cpu->burst.value == 5 && cpu->period.value == 100000
             && cpu->realtime_runtime.value == 950000
             && cpu->realtime_period.value == 1000000 && cpu->idle.value == 1
             && cpu->idle.set,
         "cpu numbers");
  CHECK_STR (cpu->cpus, "0-3", "cpu.cpus");
  CHECK_STR (cpu->mems, "0", "cpu.mems");
  CHECK (r->pids && r->pids->limit.set && r->pids->limit.value == 32771,
         "pids.limit");
  const oci_block_io *b = r->block_io;
  CHECK (b && b->weight.value == 500 && b->leaf_weight.value == 65535,
         "blockIO weights");
  CHECK (b->weight_device_len == 2 && b->weight_device[0].major == 8
             && b->weight_device[0].weight.value == 600
             && b->weight_device[0].leaf_weight.value == 300
             && !b->weight_device[1].weight.set,
         "blockIO.weightDevice");
  CHECK (b->throttle_read_bps_device_len == 1
             && b->throttle_read_bps_device[0].rate == 600,
         "throttleReadBpsDevice");
  CHECK (b->throttle_write_bps_device[0].rate == UINT64_MAX
             && b->throttle_write_bps_device[0].minor == 1,
         "throttleWriteBpsDevice");
  CHECK (b->throttle_read_iops_device[0].rate == 300,
         "throttleReadIOPSDevice");
  CHECK (b->throttle_write_iops_device_len == 2
             && b->throttle_write_iops_device[1].major == 9
             && b->throttle_write_iops_device[1].rate == 302,
         "throttleWriteIOPSDevice");
  CHECK (r->hugepage_limits_len == 2 && r->hugepage_limits[0].limit == 209715200,
         "hugepageLimits");
  CHECK_STR (r->hugepage_limits[1].page_size, "1GB", "hugepageLimits pageSize");
  CHECK (r->network && r->network->class_id.value == 1048577
             && r->network->priorities_len == 2
             && r->network->priorities[1].priority == 1000,
         "network");
  CHECK_STR (r->network->priorities[0].name, "eth0", "network priority name");
  CHECK (r->rdma_len == 2 && r->rdma[0].hca_handles.value == 3
             && r->rdma[0].hca_objects.value == 10000
             && !r->rdma[1].hca_handles.set && r->rdma[1].hca_objects.value == 7,
         "rdma");
  CHECK_STR (r->rdma[0].device, "mlx5_1", "rdma key");
  CHECK_STR (oci_map_get (&r->unified, "io.max"), "259:0 rbps=2097152",
             "unified");
}

static void
check_seccomp (const oci_seccomp *s)
{
  CHECK (s != NULL, "seccomp present");
  CHECK_STR (s->default_action, "SCMP_ACT_ERRNO", "seccomp.defaultAction");
  CHECK (s->default_errno_ret.set && s->default_errno_ret.value == 1,
         "seccomp.defaultErrnoRet");
  CHECK (STRV_IS (s->architectures, "SCMP_ARCH_X86_64", "SCMP_ARCH_X86"),
         "seccomp.architectures");
  CHECK (STRV_IS (s->flags, "SECCOMP_FILTER_FLAG_LOG"), "seccomp.flags");
  CHECK_STR (s->listener_path, "/run/seccomp.sock", "seccomp.listenerPath");
  CHECK_STR (s->listener_metadata, "meta", "seccomp.listenerMetadata");
  CHECK (s->syscalls_len == 3, "seccomp.syscalls count");
  CHECK (STRV_IS (s->syscalls[0].names, "read", "write")
             && s->syscalls[0].args_len == 0 && !s->syscalls[0].errno_ret.set,
         "syscalls[0]");
  const oci_seccomp_syscall *sc = &s->syscalls[1];
  CHECK (sc->args_len == 2 && sc->args[0].index == 0 && sc->args[0].value == 8
             && !sc->args[0].value_two.set,
         "syscalls[1].args[0]");
  CHECK_STR (sc->args[0].op, "SCMP_CMP_EQ", "args[0].op");
  CHECK (sc->args[1].index == 1 && sc->args[1].value == UINT64_MAX
             && sc->args[1].value_two.set && sc->args[1].value_two.value == 4,
         "syscalls[1].args[1] full uint64");
  CHECK_STR (s->syscalls[2].action, "SCMP_ACT_ERRNO", "syscalls[2].action");
  CHECK (s->syscalls[2].errno_ret.set && s->syscalls[2].errno_ret.value == 38,
         "syscalls[2].errnoRet");
}

static void
check_linux (const oci_linux *l)
{
  CHECK (l != NULL, "linux present");
  CHECK (l->namespaces_len == 3, "namespaces count");
  CHECK_STR (l->namespaces[1].type, "network", "namespaces[1].type");
  CHECK_STR (l->namespaces[1].path, "/var/run/netns/n", "namespaces[1].path");
  CHECK (l->namespaces[0].path == NULL, "namespaces[0].path absent");
  CHECK (l->uid_mappings_len == 1 && l->uid_mappings[0].host_id == 1000,
         "linux.uidMappings");
  CHECK (l->gid_mappings_len == 2 && l->gid_mappings[1].host_id == UINT32_MAX
             && l->gid_mappings[1].size == UINT32_MAX,
         "linux.gidMappings at uint32 max");
  CHECK (l->time_offsets_len == 2, "timeOffsets count");
  CHECK_STR (l->time_offsets[0].clock, "monotonic", "timeOffsets key");
  CHECK (l->time_offsets[0].secs == -86400
             && l->time_offsets[0].nanosecs == 999999999
             && l->time_offsets[1].secs == INT64_MAX
             && l->time_offsets[1].nanosecs == 0,
         "timeOffsets values");
  CHECK (l->devices_len == 2 && l->devices[0].major == 10
             && l->devices[0].minor == 229 && l->devices[0].file_mode.value == 438
             && l->devices[0].uid.set && l->devices[0].uid.value == 0
             && l->devices[0].gid.value == 5 && !l->devices[1].file_mode.set,
         "linux.devices");
  CHECK_STR (l->devices[1].type, "p", "devices[1].type");
  CHECK_STR (l->cgroups_path, "/machine/box", "cgroupsPath");
  check_resources (l->resources);
  CHECK_STR (l->rootfs_propagation, "rslave", "rootfsPropagation");
  check_seccomp (l->seccomp);
  CHECK_STR (oci_map_get (&l->sysctl, "net.ipv4.ip_forward"), "1", "sysctl");
  CHECK (l->sysctl.len == 2, "sysctl count");
  CHECK (STRV_IS (l->masked_paths, "/proc/kcore", "/proc/keys"), "maskedPaths");
  CHECK (STRV_IS (l->readonly_paths, "/proc/sys"), "readonlyPaths");
  CHECK_STR (l->mount_label, "system_u:object_r:container_file_t:s0",
             "mountLabel");
  const oci_intel_rdt *rdt = l->intel_rdt;
  CHECK (rdt && rdt->enable_monitoring && rdt->enable_cmt && !rdt->enable_mbm,
         "intelRdt booleans");
  CHECK_STR (rdt->clos_id, "guaranteed", "intelRdt.closID");
  CHECK_STR (rdt->l3_cache_schema, "L3:0=7f0", "intelRdt.l3CacheSchema");
  CHECK_STR (rdt->mem_bw_schema, "MB:0=20", "intelRdt.memBwSchema");
  CHECK (STRV_IS (rdt->schemata, "L2:0=ff", "L3:0=f"), "intelRdt.schemata");
  CHECK (l->personality && l->personality->flags
             && l->personality->flags[0] == NULL,
         "personality.flags empty");
  CHECK_STR (l->personality->domain, "LINUX32", "personality.domain");
  CHECK_STR (l->memory_policy->mode, "MPOL_INTERLEAVE", "memoryPolicy.mode");
  CHECK_STR (l->memory_policy->nodes, "0-1", "memoryPolicy.nodes");
  CHECK (STRV_IS (l->memory_policy->flags, "MPOL_F_STATIC_NODES"),
         "memoryPolicy.flags");
  CHECK (l->net_devices_len == 2, "netDevices count");
  CHECK_STR (l->net_devices[0].host_name, "eth9", "netDevices key");
  CHECK_STR (l->net_devices[0].name, "ctr0", "netDevices name");
  CHECK (l->net_devices[1].name == NULL, "netDevices name absent");
}

static void
test_full_config (void)
{
  sr_error *err = NULL;
  oci_config *c = parse (full_config, &err);
  CHECK (c != NULL, "full config parses%s%s", err ? ": " : "",
         err ? err->msg : "");
  if (c == NULL)
    {
      sr_error_free (err);
      return;
    }
  CHECK_STR (c->oci_version, "1.3.0", "ociVersion");
  check_process (c->process);
  CHECK (c->root && c->root->readonly, "root.readonly");
  CHECK_STR (c->root->path, "rootfs", "root.path");
  CHECK_STR (c->hostname, "box", "hostname");
  CHECK_STR (c->domainname, "example.org", "domainname");
  check_mounts_hooks (c);
  check_linux (c->linux_);
  oci_config_free (c);
}

static void
test_minimal_config (void)
{
  oci_config *c = expect_ok ("");
  CHECK (c && c->process == NULL && c->root == NULL && c->linux_ == NULL
             && c->hooks == NULL && c->mounts == NULL && c->mounts_len == 0
             && c->annotations.len == 0 && c->hostname == NULL,
         "absent objects are NULL, absent arrays empty");
  oci_config_free (c);

  c = expect_ok ("'process': null, 'hostname': null, 'mounts': null");
  CHECK (c && c->process == NULL && c->hostname == NULL && c->mounts == NULL,
         "JSON null is the same as absent");
  oci_config_free (c);

  c = expect_ok ("'process': {'cwd': '/', 'user': {}}, 'linux': {}");
  CHECK (c && c->process->user.uid == 0 && c->process->args == NULL
             && !c->process->oom_score_adj.set && c->linux_ != NULL
             && c->linux_->resources == NULL,
         "defaults: uid 0, args NULL, oomScoreAdj unset");
  oci_config_free (c);

  c = expect_ok ("'mounts': []");
  CHECK (c && c->mounts_len == 0, "empty mounts array");
  oci_config_free (c);
}

/* ---- versions ----------------------------------------------------------- */

static void
test_versions (void)
{
  const char *good[] = { "1.0.0", "1.0.2-dev", "1.1.0", "1.2.1",
                         "1.3.0", "1.3.99", "1.0.0-rc5", "1.2.0+build.1" };
  for (size_t i = 0; i < ARRAY_SIZE (good); i++)
    {
      _cleanup_free_ char *doc = xasprintf ("{\"ociVersion\": \"%s\"}", good[i]);
      sr_error *err = NULL;
      oci_config *c = oci_config_parse_data (doc, strlen (doc), &err);
      CHECK (c != NULL, "ociVersion %s accepted", good[i]);
      oci_config_free (c);
      sr_error_free (err);
    }
  const char *bad[] = { "2.0.0", "0.9.0", "1.4.0", "1.0",   "1",
                        "",      "abc",   "1.0.0x", "v1.0.0", "1.10.0" };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    {
      _cleanup_free_ char *doc = xasprintf ("{\"ociVersion\": \"%s\"}", bad[i]);
      _cleanup_free_ char *want = xasprintf (
          "ociVersion \"%s\" is not supported (1.0.0 to 1.3.x)", bad[i]);
      sr_error *err = NULL;
      oci_config *c = oci_config_parse_data (doc, strlen (doc), &err);
      CHECK (c == NULL, "ociVersion \"%s\" rejected", bad[i]);
      CHECK_STR (err ? err->msg : NULL, want, "ociVersion message");
      oci_config_free (c);
      sr_error_free (err);
    }
  expect_doc_error ("{\"ociVersion\": \"2.0\\n\\u0001\\\"x\"}",
                    "ociVersion \"2.0\\x0a\\x01\\x22x\" is not supported");
  expect_doc_error ("{}", "ociVersion: required");
  expect_doc_error ("{\"ociVersion\": 1}", "ociVersion: expected string");
}

/* ---- wrong types -------------------------------------------------------- */

static void
test_wrong_types (void)
{
  expect_error ("'process': {'cwd': '/', 'args': 'sh'}",
                "process.args: expected array of strings");
  expect_error ("'process': {'cwd': '/', 'args': ['sh', 1]}",
                "process.args: expected array of strings");
  expect_error ("'process': []", "process: expected object");
  expect_error ("'process': {'cwd': '/', 'terminal': 'true'}",
                "process.terminal: expected boolean");
  expect_error ("'process': {'cwd': '/', 'terminal': 1}",
                "process.terminal: expected boolean");
  expect_error ("'process': {'cwd': 7}", "process.cwd: expected string");
  expect_error ("'hostname': true", "hostname: expected string");
  expect_error ("'mounts': {}", "mounts: expected array");
  expect_error ("'mounts': [{'destination': '/a'}, 'x']",
                "mounts[1]: expected object");
  expect_error ("'annotations': []", "annotations: expected object");
  expect_error ("'annotations': {'a': 1}", "annotations.a: expected string");
  expect_error ("'annotations': {'org.x/y': null}",
                "annotations[\"org.x/y\"]: expected string");
  expect_error ("'linux': {'sysctl': {'net.core.somaxconn': 1024}}",
                "linux.sysctl[\"net.core.somaxconn\"]: expected string");
  expect_error ("'linux': {'resources': {'memory': {'limit': '1G'}}}",
                "linux.resources.memory.limit: expected integer");
  expect_error ("'linux': {'resources': {'memory': {'limit': 1.5}}}",
                "linux.resources.memory.limit: expected integer");
  expect_error ("'linux': {'resources': {'memory': {'limit': 1e3}}}",
                "linux.resources.memory.limit: expected integer");
  expect_error ("'linux': {'resources': {'memory': {'limit': 1.0}}}",
                "linux.resources.memory.limit: expected integer");
  expect_error ("'linux': {'resources': {'memory': {'disableOOMKiller': 0}}}",
                "linux.resources.memory.disableOOMKiller: expected boolean");
  expect_error ("'process': {'cwd': '/', 'rlimits': [{'type': 'RLIMIT_CPU', "
                "'hard': -1, 'soft': 1}]}",
                "process.rlimits[0].hard: expected unsigned integer");
  expect_error ("'process': {'cwd': '/', 'rlimits': [{'type': 'RLIMIT_CPU', "
                "'hard': '5', 'soft': 1}]}",
                "process.rlimits[0].hard: expected unsigned integer");
  expect_error ("'process': {'cwd': '/', 'user': {'additionalGids': [1, -2]}}",
                "process.user.additionalGids[1]: expected unsigned integer");
  expect_error ("'process': {'cwd': '/', 'user': {'additionalGids': 5}}",
                "process.user.additionalGids: expected array of unsigned integers");
  expect_error ("'process': {'cwd': '/', 'user': 0}",
                "process.user: expected object");
  expect_error ("'linux': {'timeOffsets': {'monotonic': {'secs': 'x'}}}",
                "linux.timeOffsets.monotonic.secs: expected integer");
  expect_error ("'linux': {'timeOffsets': []}",
                "linux.timeOffsets: expected object");
  expect_error ("'linux': {'resources': {'rdma': {'mlx5_1': 3}}}",
                "linux.resources.rdma.mlx5_1: expected object");
  expect_error ("'linux': {'netDevices': {'eth0': {'name': 0}}}",
                "linux.netDevices.eth0.name: expected string");
  expect_error ("'linux': {'seccomp': {'defaultAction': 'SCMP_ACT_ALLOW', "
                "'syscalls': [{'names': ['x'], 'action': 'SCMP_ACT_ALLOW', "
                "'args': [{'index': 0, 'value': 1, 'op': 2}]}]}}",
                "linux.seccomp.syscalls[0].args[0].op: expected string");
  expect_error ("'linux': {'intelRdt': {'enableMonitoring': 'yes'}}",
                "linux.intelRdt.enableMonitoring: expected boolean");
  expect_error ("'hooks': {'poststop': {'path': '/x'}}",
                "hooks.poststop: expected array");
  expect_error ("'root': 'rootfs'", "root: expected object");
}

/* ---- integer ranges ----------------------------------------------------- */

static void
test_integer_ranges (void)
{
  expect_error ("'process': {'cwd': '/', 'user': {'uid': 4294967296}}",
                "process.user.uid: 4294967296 is out of range (0 to 4294967295)");
  expect_error ("'process': {'cwd': '/', 'user': {'gid': -1}}",
                "process.user.gid: expected unsigned integer");
  expect_error ("'process': {'cwd': '/', 'rlimits': [{'type': 'RLIMIT_CPU', "
                "'hard': 18446744073709551616, 'soft': 1}]}",
                "process.rlimits[0].hard: 18446744073709551616 is out of range "
                "(0 to 18446744073709551615)");
  expect_error ("'linux': {'resources': {'memory': {'limit': "
                "9223372036854775808}}}",
                "linux.resources.memory.limit: 9223372036854775808 is out of "
                "range (-9223372036854775808 to 9223372036854775807)");
  expect_error ("'linux': {'resources': {'memory': {'limit': "
                "-9223372036854775809}}}",
                "linux.resources.memory.limit: -9223372036854775809 is out of "
                "range (-9223372036854775808 to 9223372036854775807)");
  expect_error ("'process': {'cwd': '/', 'oomScoreAdj': 2147483648}",
                "process.oomScoreAdj: 2147483648 is out of range "
                "(-2147483648 to 2147483647)");
  expect_error ("'linux': {'resources': {'blockIO': {'weight': 65536}}}",
                "linux.resources.blockIO.weight: 65536 is out of range "
                "(0 to 65535)");
  expect_error ("'linux': {'uidMappings': [{'containerID': 0, 'hostID': 1, "
                "'size': 4294967296}]}",
                "linux.uidMappings[0].size: 4294967296 is out of range "
                "(0 to 4294967295)");
  expect_error ("'linux': {'resources': {'memory': {'swappiness': -1}}}",
                "linux.resources.memory.swappiness: expected unsigned integer");
  expect_error ("'process': {'cwd': '/', 'user': {'uid': "
                "123456789012345678901234567890123456789012345678901234567890}}",
                "process.user.uid: 12345678901234567890123456789012 is out of "
                "range (0 to 4294967295)");

  oci_config *c = expect_ok (
      "'process': {'cwd': '/', 'oomScoreAdj': -2147483648, 'user': {'uid': "
      "4294967295, 'gid': 0}}, 'linux': {'resources': {'memory': {'limit': "
      "-9223372036854775808, 'swappiness': 18446744073709551615}}}");
  CHECK (c && c->process->oom_score_adj.value == INT32_MIN
             && c->process->user.uid == UINT32_MAX
             && c->linux_->resources->memory->limit.value == INT64_MIN
             && c->linux_->resources->memory->swappiness.value == UINT64_MAX,
         "integer bounds parse exactly");
  oci_config_free (c);

  /* Like Go's ParseUint: a sign is never part of an unsigned integer. */
  expect_error ("'process': {'cwd': '/', 'user': {'uid': -0}}",
                "process.user.uid: expected unsigned integer");
}

/* ---- required fields ---------------------------------------------------- */

static void
test_required (void)
{
  expect_error ("'root': {}", "root.path: required");
  expect_error ("'root': {'path': null}", "root.path: required");
  expect_error ("'process': {'args': ['sh']}", "process.cwd: required");
  expect_error ("'mounts': [{'destination': '/a'}, {'destination': '/b'}, "
                "{'destination': '/c'}, {'source': '/d'}]",
                "mounts[3].destination: required");
  expect_error ("'hooks': {'createRuntime': [{'path': '/a'}, {'args': []}]}",
                "hooks.createRuntime[1].path: required");
  expect_error ("'hooks': {'prestart': [{'path': '/a', 'timeout': 0}]}",
                "hooks.prestart[0].timeout: must be greater than zero");
  expect_error ("'hooks': {'poststop': [{'path': '/a', 'timeout': -3}]}",
                "hooks.poststop[0].timeout: must be greater than zero");
  expect_error ("'linux': {'namespaces': [{'path': '/proc/1/ns/net'}]}",
                "linux.namespaces[0].type: required");
  expect_error ("'linux': {'devices': [{'path': '/dev/x'}]}",
                "linux.devices[0].type: required");
  expect_error ("'linux': {'devices': [{'type': 'c'}]}",
                "linux.devices[0].path: required");
  expect_error ("'linux': {'seccomp': {}}",
                "linux.seccomp.defaultAction: required");
  expect_error ("'linux': {'seccomp': {'defaultAction': 'SCMP_ACT_ALLOW', "
                "'syscalls': [{'action': 'SCMP_ACT_ERRNO'}]}}",
                "linux.seccomp.syscalls[0].names: required");
  expect_error ("'linux': {'seccomp': {'defaultAction': 'SCMP_ACT_ALLOW', "
                "'syscalls': [{'names': ['a']}]}}",
                "linux.seccomp.syscalls[0].action: required");
  expect_error ("'linux': {'seccomp': {'defaultAction': 'SCMP_ACT_ALLOW', "
                "'syscalls': [{'names': ['a'], 'action': 'SCMP_ACT_ERRNO', "
                "'args': [{'index': 1, 'op': 'SCMP_CMP_EQ'}]}]}}",
                "linux.seccomp.syscalls[0].args[0].value: required");
  expect_error ("'linux': {'uidMappings': [{'hostID': 1, 'size': 1}]}",
                "linux.uidMappings[0].containerID: required");
  expect_error ("'linux': {'gidMappings': [{'containerID': 1, 'size': 1}]}",
                "linux.gidMappings[0].hostID: required");
  expect_error ("'mounts': [{'destination': '/m', 'uidMappings': "
                "[{'containerID': 1, 'hostID': 1}]}]",
                "mounts[0].uidMappings[0].size: required");
  expect_error ("'process': {'cwd': '/', 'rlimits': [{'hard': 1, 'soft': 1}]}",
                "process.rlimits[0].type: required");
  expect_error ("'process': {'cwd': '/', 'scheduler': {'nice': 1}}",
                "process.scheduler.policy: required");
  expect_error ("'process': {'cwd': '/', 'ioPriority': {'priority': 1}}",
                "process.ioPriority.class: required");
  expect_error ("'process': {'cwd': '/', 'consoleSize': {'height': 1}}",
                "process.consoleSize.width: required");
  expect_error ("'linux': {'resources': {'devices': [{'access': 'rwm'}]}}",
                "linux.resources.devices[0].allow: required");
  expect_error ("'linux': {'resources': {'hugepageLimits': [{'limit': 1}]}}",
                "linux.resources.hugepageLimits[0].pageSize: required");
  expect_error ("'linux': {'resources': {'blockIO': {'throttleReadBpsDevice': "
                "[{'major': 8, 'minor': 0}]}}}",
                "linux.resources.blockIO.throttleReadBpsDevice[0].rate: required");
  expect_error ("'linux': {'resources': {'blockIO': {'weightDevice': "
                "[{'major': 8, 'weight': 10}]}}}",
                "linux.resources.blockIO.weightDevice[0].minor: required");
  expect_error ("'linux': {'resources': {'network': {'priorities': "
                "[{'name': 'eth0'}]}}}",
                "linux.resources.network.priorities[0].priority: required");
  expect_error ("'linux': {'personality': {'flags': []}}",
                "linux.personality.domain: required");
  expect_error ("'linux': {'memoryPolicy': {'nodes': '0'}}",
                "linux.memoryPolicy.mode: required");
}

/* ---- malformed documents ------------------------------------------------ */

static void
test_malformed (void)
{
  expect_doc_error ("", "invalid JSON: ");
  expect_doc_error ("{", "invalid JSON: ");
  expect_doc_error ("{\"ociVersion\": \"1.0.0\"", "invalid JSON: ");
  expect_doc_error ("{\"ociVersion\": \"1.0.0\", \"process\": {\"cwd\": \"/",
                    "invalid JSON: ");
  expect_doc_error ("{\"ociVersion\": }", "invalid JSON: ");
  expect_doc_error ("{\"ociVersion\": \"1.0.0\"} x", "invalid JSON: ");
  expect_doc_error ("{\"ociVersion\": \"1.0.0\"}{}", "invalid JSON: ");
  expect_doc_error ("/* c */ {\"ociVersion\": \"1.0.0\"}", "invalid JSON: ");
  expect_doc_error ("{'ociVersion': '1.0.0'}", "invalid JSON: ");
  expect_doc_error ("{\"ociVersion\": \"1.0.0\",}", "invalid JSON: ");
  expect_doc_error ("{\"a\": \"\xff\xfe\", \"ociVersion\": \"1.0.0\"}",
                    "invalid JSON: ");
  expect_doc_error ("{\"a\": \"x\ny\", \"ociVersion\": \"1.0.0\"}",
                    "invalid JSON: ");
  expect_doc_error ("[]", "expected a JSON object at the top level");
  expect_doc_error ("\"1.0.0\"", "expected a JSON object at the top level");
  expect_doc_error ("null", "expected a JSON object at the top level");
  expect_doc_error ("42", "expected a JSON object at the top level");

  /* A NUL byte inside the buffer is not the end of the document. */
  static const char with_nul[] = "{\"ociVersion\": \"1.0.0\"}\0garbage";
  sr_error *err = NULL;
  oci_config *c = oci_config_parse_data (with_nul, sizeof with_nul - 1, &err);
  CHECK (c == NULL && err != NULL && str_has_prefix (err->msg, "invalid JSON"),
         "raw NUL byte after the document is rejected");
  oci_config_free (c);
  sr_error_free (err);

  /* "\u0000" would silently truncate a path in a NUL-terminated string. */
  expect_doc_error ("{\"ociVersion\": \"1.0.0\", \"hostname\": \"a\\u0000b\"}",
                    "invalid JSON: NUL character in a string");
  expect_doc_error ("{\"ociVersion\": \"1.0.0\", \"a\\u0000\": 1}",
                    "invalid JSON: NUL character in a string");

  err = NULL;
  c = oci_config_parse_data ("{}", (size_t) OCI_MAX_DOCUMENT_SIZE + 1, &err);
  CHECK (c == NULL && err != NULL && err->errnum == EFBIG,
         "document over OCI_MAX_DOCUMENT_SIZE refused before reading it");
  oci_config_free (c);
  sr_error_free (err);
}

static char *
nested (size_t levels)
{
  size_t head = strlen ("{\"ociVersion\": \"1.0.0\", \"x\": ");
  char *d = xmalloc (head + 2 * levels + 3);
  strcpy (d, "{\"ociVersion\": \"1.0.0\", \"x\": ");
  memset (d + head, '[', levels);
  memset (d + head + levels, ']', levels);
  strcpy (d + head + 2 * levels, "}");
  return d;
}

static void
test_depth (void)
{
  /* The top-level object is level 1. */
  _cleanup_free_ char *ok = nested (63);
  sr_error *err = NULL;
  oci_config *c = oci_config_parse_data (ok, strlen (ok), &err);
  CHECK (c != NULL, "64 levels of nesting accepted");
  oci_config_free (c);
  sr_error_free (err);

  _cleanup_free_ char *deep = nested (64);
  expect_doc_error (deep, "invalid JSON: nesting deeper than 64 levels");

  /* Far deeper than any stack could recurse through, and unterminated. */
  size_t n = 1000000;
  _cleanup_free_ char *bomb = xmalloc (n + 1);
  memset (bomb, '[', n);
  bomb[n] = '\0';
  expect_doc_error (bomb, "invalid JSON: nesting deeper than 64 levels");
  memset (bomb, '{', 1);
  for (size_t i = 1; i + 5 < n; i += 5)
    memcpy (bomb + i, "\"a\":{", 5);
  expect_doc_error (bomb, "invalid JSON: ");
}

/* ---- leniency ----------------------------------------------------------- */

static void
test_unknown_and_duplicates (void)
{
  oci_config *c = expect_ok (
      "'future': {'a': [1, 2.5, true, null, {'b': 'c'}]}, "
      "'process': {'cwd': '/', 'newThing': 1e400, 'user': {'sid': 'S-1'}}, "
      "'linux': {'resources': {'memory': {'limit': 5, 'bogus': -1.5e-3}}, "
      "'solarisThing': 'x'}, 'solaris': {}, 'vm': {'kernel': {'path': 1}}");
  CHECK (c && c->linux_->resources->memory->limit.value == 5,
         "unknown fields at every level are ignored");
  oci_config_free (c);

  c = expect_ok ("'hostname': 'first', 'hostname': 'second'");
  CHECK_STR (c ? c->hostname : NULL, "second", "repeated key: the last wins");
  oci_config_free (c);

  c = expect_ok ("'hostname': 5, 'hostname': 'fixed'");
  CHECK_STR (c ? c->hostname : NULL, "fixed",
             "repeated key: an earlier bad value is overridden");
  oci_config_free (c);

  c = expect_ok ("'annotations': {'a': '1', 'b': '2', 'a': '3'}");
  CHECK (c && c->annotations.len == 2, "repeated map key kept once");
  CHECK_STR (c ? oci_map_get (&c->annotations, "a") : NULL, "3",
             "repeated map key: the last value wins");
  CHECK_STR (c ? c->annotations.v[0].key : NULL, "b",
             "map order follows the kept entries");
  oci_config_free (c);

  c = expect_ok ("'linux': {'netDevices': {'e0': {'name': 'x'}, "
                 "'e0': {'name': 'y'}}}");
  CHECK (c && c->linux_->net_devices_len == 1, "repeated keyed entry kept once");
  CHECK_STR (c ? c->linux_->net_devices[0].name : NULL, "y",
             "repeated keyed entry: the last wins");
  oci_config_free (c);

  c = expect_ok ("'annotations': {}");
  CHECK (c && c->annotations.len == 0, "empty annotations");
  oci_config_free (c);

  c = expect_ok ("'hostname': 'h\\u00e9\\n\\\"'");
  CHECK_STR (c ? c->hostname : NULL, "h\xc3\xa9\n\"", "escapes decoded");
  oci_config_free (c);
}

/* Errors in keyed entries show the key; odd keys are quoted and escaped. */
static void
test_error_paths (void)
{
  expect_error ("'annotations': {'a\\nb': 1}",
                "annotations[\"a\\x0ab\"]: expected string");
  expect_error ("'annotations': {'': 1}", "annotations[\"\"]: expected string");
  _cleanup_free_ char *longkey = xmalloc (200);
  memset (longkey, 'k', 100);
  strcpy (longkey + 100, ".");
  _cleanup_free_ char *extra
      = xasprintf ("'annotations': {'%s': false}", longkey);
  _cleanup_free_ char *want = xasprintf (
      "annotations[\"%.64s...\"]: expected string", longkey);
  expect_error (extra, want);
}

/* ---- parse + free on every failure point -------------------------------- */

/* Every truncation of a valid document fails cleanly (the sanitizers and
 * valgrind see the leaks if any). */
static void
test_truncations (void)
{
  _cleanup_free_ char *doc = J (full_config);
  size_t len = strlen (doc), failed = 0;
  for (size_t n = 0; n < len; n++)
    {
      sr_error *err = NULL;
      oci_config *c = oci_config_parse_data (doc, n, &err);
      if (c == NULL && err != NULL && strchr (err->msg, '\n') == NULL)
        failed++;
      oci_config_free (c);
      sr_error_free (err);
    }
  CHECK (failed == len, "all %zu truncations rejected with one-line errors",
         len);
}

/* Replace each integer/boolean/string in turn by a value of another type:
 * every field's failure path runs, and frees what was filled before it. */
static void
test_type_swaps (void)
{
  _cleanup_free_ char *doc = J (full_config);
  size_t len = strlen (doc), tried = 0, rejected = 0;
  for (size_t i = 0; i < len; i++)
    {
      if (!(doc[i] == ':' && doc[i + 1] == ' ' && i + 2 < len))
        continue;
      /* Swap the value after ": " with an object, which no scalar accepts
       * and no object field needs. */
      size_t start = i + 2, end = start;
      char first = doc[start];
      if (first == '"')
        {
          end = start + 1;
          while (end < len && doc[end] != '"')
            end++;
          end++;
        }
      else if ((first >= '0' && first <= '9') || first == '-' || first == 't'
               || first == 'f')
        while (end < len && strchr (",}] ", doc[end]) == NULL)
          end++;
      else
        continue;
      _cleanup_free_ char *mut = xasprintf ("%.*s[]%s", (int) start, doc,
                                            doc + end);
      sr_error *err = NULL;
      oci_config *c = oci_config_parse_data (mut, strlen (mut), &err);
      tried++;
      if (c == NULL && err != NULL)
        rejected++;
      oci_config_free (c);
      sr_error_free (err);
    }
  /* Every known field and map value has a type that an array is not; the
   * unknown fields hold no scalar right after a key. */
  CHECK (tried > 150 && rejected == tried,
         "type swaps: %zu tried, %zu rejected", tried, rejected);
}

/* ---- files -------------------------------------------------------------- */

static int
write_file (const char *path, const char *text)
{
  _cleanup_close_ int fd
      = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || sr_write_all (fd, text, strlen (text)) < 0)
    return -1;
  return 0;
}

static void
test_files (void)
{
  char dir[] = "/tmp/test-oci-parse.XXXXXX";
  bool made = mkdtemp (dir) != NULL;
  CHECK (made, "temp dir");
  _cleanup_free_ char *path = xasprintf ("%s/config.json", dir);
  _cleanup_free_ char *doc = J (full_config);
  CHECK (write_file (path, doc) == 0, "write file");

  sr_error *err = NULL;
  oci_config *c = oci_config_parse_file (path, &err);
  CHECK (c != NULL && c->linux_->seccomp->syscalls_len == 3,
         "oci_config_parse_file");
  oci_config_free (c);
  sr_error_free (err);

  CHECK (write_file (path, "{\"ociVersion\": ") == 0, "write truncated file");
  err = NULL;
  c = oci_config_parse_file (path, &err);
  _cleanup_free_ char *want = xasprintf ("%s: invalid JSON: ", path);
  CHECK (c == NULL && err && str_has_prefix (err->msg, want),
         "file errors are prefixed with the path: %s", err ? err->msg : "");
  oci_config_free (c);
  sr_error_free (err);

  const char *typed = "{\"ociVersion\": \"1.0.0\", \"process\": {\"cwd\": \"/\", "
                      "\"args\": \"sh\"}}";
  CHECK (write_file (path, typed) == 0, "write mistyped file");
  err = NULL;
  c = oci_config_parse_file (path, &err);
  _cleanup_free_ char *want2
      = xasprintf ("%s: process.args: expected array of strings", path);
  CHECK_STR (err ? err->msg : NULL, want2, "file error names path and field");
  oci_config_free (c);
  sr_error_free (err);

  unlink (path);
  err = NULL;
  c = oci_config_parse_file (path, &err);
  CHECK (c == NULL && err && err->errnum == ENOENT, "missing file: ENOENT");
  oci_config_free (c);
  sr_error_free (err);
  rmdir (dir);
}

/* ---- the lone objects --------------------------------------------------- */

static void
test_lone_objects (void)
{
  _cleanup_free_ char *pdoc = J ("{'args': ['ls'], 'env': ['A=b'], 'user': "
                                 "{'uid': 5}, 'capabilities': {}}");
  sr_error *err = NULL;
  oci_process *p = oci_process_parse_data (pdoc, strlen (pdoc), &err);
  CHECK (p && p->cwd == NULL && STRV_IS (p->args, "ls") && p->user.uid == 5,
         "process.json without cwd");
  oci_process_free (p);
  sr_error_free (err);

  _cleanup_free_ char *pbad = J ("{'args': 'ls'}");
  err = NULL;
  p = oci_process_parse_data (pbad, strlen (pbad), &err);
  CHECK_STR (err ? err->msg : NULL, "args: expected array of strings",
             "lone process paths start at its fields");
  oci_process_free (p);
  sr_error_free (err);

  _cleanup_free_ char *rdoc = J ("{'memory': {'limit': 1024, 'swap': -1}, "
                                 "'pids': {'limit': -1}, 'cpu': {'cpus': '1'}}");
  err = NULL;
  oci_resources *r = oci_resources_parse_data (rdoc, strlen (rdoc), &err);
  CHECK (r && r->memory->limit.value == 1024 && r->memory->swap.value == -1
             && r->pids->limit.value == -1 && r->block_io == NULL,
         "lone resources");
  oci_resources_free (r);
  sr_error_free (err);

  _cleanup_free_ char *rbad = J ("{'memory': {'limit': true}}");
  err = NULL;
  r = oci_resources_parse_data (rbad, strlen (rbad), &err);
  CHECK_STR (err ? err->msg : NULL, "memory.limit: expected integer",
             "lone resources error path");
  oci_resources_free (r);
  sr_error_free (err);

  _cleanup_free_ char *sdoc = J ("{'defaultAction': 'SCMP_ACT_ALLOW', "
                                 "'syscalls': [{'names': ['kexec_load'], "
                                 "'action': 'SCMP_ACT_ERRNO', 'errnoRet': 1}]}");
  err = NULL;
  oci_seccomp *s = oci_seccomp_parse_data (sdoc, strlen (sdoc), &err);
  CHECK (s && s->syscalls_len == 1 && s->syscalls[0].errno_ret.value == 1,
         "lone seccomp");
  oci_seccomp_free (s);
  sr_error_free (err);

  _cleanup_free_ char *sbad = J ("{'syscalls': []}");
  err = NULL;
  s = oci_seccomp_parse_data (sbad, strlen (sbad), &err);
  CHECK_STR (err ? err->msg : NULL, "defaultAction: required",
             "lone seccomp required field");
  oci_seccomp_free (s);
  sr_error_free (err);

  err = NULL;
  s = oci_seccomp_parse_data ("[", 1, &err);
  CHECK (s == NULL && err && str_has_prefix (err->msg, "invalid JSON: "),
         "lone seccomp malformed");
  sr_error_free (err);

  oci_config_free (NULL);
  oci_process_free (NULL);
  oci_resources_free (NULL);
  oci_seccomp_free (NULL);
  oci_state_free (NULL);
  oci_map_free (NULL);
  CHECK (true, "free functions accept NULL");
}

/* ---- state -------------------------------------------------------------- */

static void
test_state (void)
{
  oci_kv ann[] = { { "org.a", "1" }, { "b", "quote\" and \\ and /" } };
  oci_state s = {
    .oci_version = "1.2.0",
    .id = "web",
    .status = "running",
    .pid = 4242,
    .bundle = "/run/bundles/web",
    .annotations = { ann, 2 },
    .rootfs = "/run/bundles/web/rootfs",
    .created = "2024-01-02T03:04:05.123456789Z",
    .owner = "",
  };
  _cleanup_free_ char *json = oci_state_to_json (&s);
  const char *want = "{\n"
                     "  \"ociVersion\": \"1.2.0\",\n"
                     "  \"id\": \"web\",\n"
                     "  \"pid\": 4242,\n"
                     "  \"status\": \"running\",\n"
                     "  \"bundle\": \"/run/bundles/web\",\n"
                     "  \"rootfs\": \"/run/bundles/web/rootfs\",\n"
                     "  \"created\": \"2024-01-02T03:04:05.123456789Z\",\n"
                     "  \"annotations\": {\n"
                     "    \"org.a\": \"1\",\n"
                     "    \"b\": \"quote\\\" and \\\\ and /\"\n"
                     "  },\n"
                     "  \"owner\": \"\"\n"
                     "}\n";
  CHECK_STR (json, want, "state JSON in runc's shape");

  sr_error *err = NULL;
  oci_state *back = oci_state_parse_data (json, strlen (json), &err);
  CHECK (back != NULL, "state parses back");
  if (back)
    {
      CHECK_STR (back->oci_version, "1.2.0", "state ociVersion");
      CHECK_STR (back->id, "web", "state id");
      CHECK_STR (back->status, "running", "state status");
      CHECK (back->pid == 4242, "state pid");
      CHECK_STR (back->bundle, "/run/bundles/web", "state bundle");
      CHECK_STR (back->rootfs, "/run/bundles/web/rootfs", "state rootfs");
      CHECK_STR (back->created, "2024-01-02T03:04:05.123456789Z",
                 "state created");
      CHECK_STR (back->owner, "", "state owner");
      CHECK (back->annotations.len == 2, "state annotations");
      CHECK_STR (oci_map_get (&back->annotations, "b"),
                 "quote\" and \\ and /", "state annotation escapes");
      _cleanup_free_ char *again = oci_state_to_json (back);
      CHECK_STR (again, json, "state round-trip is stable");
    }
  oci_state_free (back);
  sr_error_free (err);

  oci_state bare = { .oci_version = "1.0.0", .id = "x", .status = "stopped",
                     .bundle = "/b" };
  _cleanup_free_ char *bj = oci_state_to_json (&bare);
  CHECK_STR (bj,
             "{\n  \"ociVersion\": \"1.0.0\",\n  \"id\": \"x\",\n  \"pid\": 0,\n"
             "  \"status\": \"stopped\",\n  \"bundle\": \"/b\"\n}\n",
             "state omits empty annotations and NULL rootfs/created/owner");

  const char *bad[][2] = {
    { "{\"ociVersion\": \"1.0.0\", \"id\": \"x\", \"bundle\": \"/b\"}",
      "status: required" },
    { "{\"ociVersion\": \"1.0.0\", \"id\": \"x\", \"status\": \"created\", "
      "\"bundle\": \"/b\", \"pid\": \"12\"}",
      "pid: expected integer" },
    { "{\"ociVersion\": \"1.0.0\", \"status\": \"created\", \"bundle\": \"/b\"}",
      "id: required" },
  };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    {
      err = NULL;
      oci_state *st = oci_state_parse_data (bad[i][0], strlen (bad[i][0]), &err);
      CHECK_STR (err ? err->msg : NULL, bad[i][1], "bad state %zu", i);
      oci_state_free (st);
      sr_error_free (err);
    }
}

/* ---- the fuzzing seed corpus -------------------------------------------- */

#ifdef OCI_FUZZ_CORPUS
/* Each seed must be accepted by its parser: seeds that fail early teach the
 * fuzzer little. */
static void
test_corpus (const char *sub, bool seccomp)
{
  _cleanup_free_ char *dirpath = xasprintf ("%s/%s", OCI_FUZZ_CORPUS, sub);
  _cleanup_closedir_ DIR *d = opendir (dirpath);
  CHECK (d != NULL, "corpus %s exists", dirpath);
  size_t n = 0;
  for (struct dirent *de; d && (de = readdir (d)) != NULL;)
    {
      if (de->d_name[0] == '.')
        continue;
      _cleanup_free_ char *data = NULL;
      size_t len = 0;
      sr_error *err = NULL;
      int r = sr_read_file_at (dirfd (d), de->d_name, OCI_MAX_DOCUMENT_SIZE,
                               &data, &len, &err);
      void *obj = NULL;
      if (r == 0 && seccomp)
        obj = oci_seccomp_parse_data (data, len, &err);
      else if (r == 0 && strstr (de->d_name, "state") != NULL)
        obj = oci_state_parse_data (data, len, &err);
      else if (r == 0)
        obj = oci_config_parse_data (data, len, &err);
      CHECK (obj != NULL, "seed %s/%s parses%s%s", sub, de->d_name,
             err ? ": " : "", err ? err->msg : "");
      if (seccomp)
        oci_seccomp_free (obj);
      else if (strstr (de->d_name, "state") != NULL)
        oci_state_free (obj);
      else
        oci_config_free (obj);
      sr_error_free (err);
      n++;
    }
  CHECK (n >= 3, "%zu seeds in %s", n, sub);
}
#endif

int
main (void)
{
  test_full_config ();
  test_minimal_config ();
  test_versions ();
  test_wrong_types ();
  test_integer_ranges ();
  test_required ();
  test_malformed ();
  test_depth ();
  test_unknown_and_duplicates ();
  test_error_paths ();
  test_truncations ();
  test_type_swaps ();
  test_files ();
  test_lone_objects ();
  test_state ();
#ifdef OCI_FUZZ_CORPUS
  test_corpus ("config", false);
  test_corpus ("seccomp", true);
#endif
  return unit_finish ();
}
