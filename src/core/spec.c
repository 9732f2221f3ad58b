/* The default config.json of `sandrun spec`: runc's, so that tools and
 * people used to `runc spec` get the same bundle. */
#include <stdio.h>

#include "oci-spec/oci-spec.h"
#include "sandrun/container.h"
#include "sandrun/util.h"

static const char spec_head[] =
  "{\n"
  "\t\"ociVersion\": \"" OCI_SPEC_VERSION "\",\n"
  "\t\"process\": {\n"
  "\t\t\"terminal\": true,\n"
  "\t\t\"user\": {\n\t\t\t\"uid\": 0,\n\t\t\t\"gid\": 0\n\t\t},\n"
  "\t\t\"args\": [\n\t\t\t\"sh\"\n\t\t],\n"
  "\t\t\"env\": [\n"
  "\t\t\t\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\n"
  "\t\t\t\"TERM=xterm\"\n\t\t],\n"
  "\t\t\"cwd\": \"/\",\n"
  "\t\t\"capabilities\": {\n"
  "\t\t\t\"bounding\": [\"CAP_AUDIT_WRITE\", \"CAP_KILL\", \"CAP_NET_BIND_SERVICE\"],\n"
  "\t\t\t\"effective\": [\"CAP_AUDIT_WRITE\", \"CAP_KILL\", \"CAP_NET_BIND_SERVICE\"],\n"
  "\t\t\t\"permitted\": [\"CAP_AUDIT_WRITE\", \"CAP_KILL\", \"CAP_NET_BIND_SERVICE\"],\n"
  "\t\t\t\"ambient\": [\"CAP_AUDIT_WRITE\", \"CAP_KILL\", \"CAP_NET_BIND_SERVICE\"]\n"
  "\t\t},\n"
  "\t\t\"rlimits\": [\n"
  "\t\t\t{\n\t\t\t\t\"type\": \"RLIMIT_NOFILE\",\n\t\t\t\t\"hard\": 1024,\n\t\t\t\t\"soft\": 1024\n\t\t\t}\n"
  "\t\t],\n"
  "\t\t\"noNewPrivileges\": true\n"
  "\t},\n"
  "\t\"root\": {\n\t\t\"path\": \"rootfs\",\n\t\t\"readonly\": true\n\t},\n"
  "\t\"hostname\": \"sandrun\",\n"
  "\t\"mounts\": [\n"
  "\t\t{\"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\"},\n"
  "\t\t{\"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", "
  "\"options\": [\"nosuid\", \"strictatime\", \"mode=755\", \"size=65536k\"]},\n"
  "\t\t{\"destination\": \"/dev/pts\", \"type\": \"devpts\", \"source\": \"devpts\", "
  "\"options\": [\"nosuid\", \"noexec\", \"newinstance\", \"ptmxmode=0666\", \"mode=0620\"%s]},\n"
  "\t\t{\"destination\": \"/dev/shm\", \"type\": \"tmpfs\", \"source\": \"shm\", "
  "\"options\": [\"nosuid\", \"noexec\", \"nodev\", \"mode=1777\", \"size=65536k\"]},\n"
  "\t\t{\"destination\": \"/dev/mqueue\", \"type\": \"mqueue\", \"source\": \"mqueue\", "
  "\"options\": [\"nosuid\", \"noexec\", \"nodev\"]},\n"
  "%s"
  "\t\t{\"destination\": \"/sys/fs/cgroup\", \"type\": \"cgroup\", \"source\": \"cgroup\", "
  "\"options\": [\"nosuid\", \"noexec\", \"nodev\", \"relatime\", \"ro\"]}\n"
  "\t],\n"
  "\t\"linux\": {\n"
  "%s"
  "\t\t\"namespaces\": [\n"
  "\t\t\t{\"type\": \"pid\"},\n"
  "%s"
  "\t\t\t{\"type\": \"ipc\"},\n"
  "\t\t\t{\"type\": \"uts\"},\n"
  "\t\t\t{\"type\": \"mount\"}%s\n"
  "\t\t],\n"
  "\t\t\"maskedPaths\": [\n"
  "\t\t\t\"/proc/acpi\", \"/proc/asound\", \"/proc/kcore\", \"/proc/keys\", \"/proc/latency_stats\",\n"
  "\t\t\t\"/proc/timer_list\", \"/proc/timer_stats\", \"/proc/sched_debug\", \"/sys/firmware\",\n"
  "\t\t\t\"/proc/scsi\"\n"
  "\t\t],\n"
  "\t\t\"readonlyPaths\": [\n"
  "\t\t\t\"/proc/bus\", \"/proc/fs\", \"/proc/irq\", \"/proc/sys\", \"/proc/sysrq-trigger\"\n"
  "\t\t]\n"
  "\t}\n"
  "}\n";

char *
sr_spec_default (bool rootless, uid_t uid, gid_t gid)
{
  if (!rootless)
    return xasprintf (spec_head, ", \"gid=5\"",
                      "\t\t{\"destination\": \"/sys\", \"type\": \"sysfs\", \"source\": \"sysfs\", "
                      "\"options\": [\"nosuid\", \"noexec\", \"nodev\", \"ro\"]},\n",
                      "\t\t\"resources\": {\n\t\t\t\"devices\": [\n"
                      "\t\t\t\t{\"allow\": false, \"access\": \"rwm\"}\n\t\t\t]\n\t\t},\n",
                      "\t\t\t{\"type\": \"network\"},\n", "");

  /* Rootless: a user namespace mapping the caller to root, the host's
   * network, /sys bound from the host (a fresh sysfs needs a new netns). */
  _cleanup_free_ char *maps = xasprintf (
      "\t\t\"uidMappings\": [{\"containerID\": 0, \"hostID\": %u, \"size\": 1}],\n"
      "\t\t\"gidMappings\": [{\"containerID\": 0, \"hostID\": %u, \"size\": 1}],\n",
      (unsigned) uid, (unsigned) gid);
  return xasprintf (spec_head, "",
                    "\t\t{\"destination\": \"/sys\", \"type\": \"none\", \"source\": \"/sys\", "
                    "\"options\": [\"rbind\", \"nosuid\", \"noexec\", \"nodev\", \"ro\"]},\n",
                    maps, "", ",\n\t\t\t{\"type\": \"user\"}");
}
