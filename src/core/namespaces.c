#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "core/namespaces.h"
#include "util/procfs.h"
#include "sandrun/util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const struct
{
  const char *name;
  int flag;
} ns_types[] = {
  { "pid", CLONE_NEWPID },     { "network", CLONE_NEWNET },
  { "mount", CLONE_NEWNS },    { "ipc", CLONE_NEWIPC },
  { "uts", CLONE_NEWUTS },     { "user", CLONE_NEWUSER },
  { "cgroup", CLONE_NEWCGROUP }, { "time", CLONE_NEWTIME },
};

const char *
sr_ns_type_name (size_t i)
{
  return i < ARRAY_SIZE (ns_types) ? ns_types[i].name : NULL;
}

int
sr_ns_flag (const char *type)
{
  for (size_t i = 0; i < ARRAY_SIZE (ns_types); i++)
    if (strcmp (ns_types[i].name, type) == 0)
      return ns_types[i].flag;
  return 0;
}

static int
open_ns_path (const char *type, int flag, const char *path, sr_error **err)
{
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return sr_fail (err, errno, "open %s namespace \"%s\"", type, path);
  int kind = ioctl (fd, NS_GET_NSTYPE);
  if (kind < 0)
    return sr_fail (err, errno == ENOTTY ? EINVAL : errno,
                    "%s namespace \"%s\": not a namespace", type, path);
  if (kind != flag)
    return sr_fail (err, EINVAL, "%s namespace \"%s\": a namespace of another type",
                    type, path);
  return steal_fd (&fd);
}

int
sr_ns_plan_make (const oci_linux *l, struct sr_ns_plan *plan, sr_error **err)
{
  memset (plan, 0, sizeof *plan);
  size_t n = l != NULL ? l->namespaces_len : 0;
  plan->join_fds = xcalloc (n, sizeof (int));
  plan->join_len = n;
  for (size_t i = 0; i < n; i++)
    plan->join_fds[i] = -1;

  for (size_t i = 0; i < n; i++)
    {
      const oci_namespace *ns = &l->namespaces[i];
      int flag = sr_ns_flag (ns->type);
      if (flag == 0)
        return sr_fail (err, EINVAL, "linux.namespaces[%zu]: unknown type \"%s\"", i, ns->type);
      if ((plan->new_flags | plan->join_flags) & flag)
        return sr_fail (err, EINVAL, "linux.namespaces: \"%s\" listed twice", ns->type);
      if (ns->path == NULL || ns->path[0] == '\0')
        {
          plan->new_flags |= flag;
          continue;
        }
      plan->join_flags |= flag;
      plan->join_fds[i] = open_ns_path (ns->type, flag, ns->path, err);
      if (plan->join_fds[i] < 0)
        return -1;
    }

  if (l != NULL && l->time_offsets_len > 0)
    {
      if (!(plan->new_flags & CLONE_NEWTIME))
        return sr_fail (err, EINVAL, "linux.timeOffsets needs a new time namespace");
      plan->time_offsets = true;
    }
  if (l != NULL && (l->uid_mappings_len > 0 || l->gid_mappings_len > 0)
      && !(plan->new_flags & CLONE_NEWUSER))
    return sr_fail (err, EINVAL, "linux.uidMappings need a new user namespace");
  if ((plan->new_flags & CLONE_NEWUSER) && (l->uid_mappings_len == 0 || l->gid_mappings_len == 0))
    return sr_fail (err, EINVAL, "a new user namespace needs linux.uidMappings and linux.gidMappings");
  plan->two_step = plan->join_flags != 0 || plan->time_offsets;
  return 0;
}

void
sr_ns_plan_clear (struct sr_ns_plan *plan)
{
  for (size_t i = 0; i < plan->join_len; i++)
    sr_close (plan->join_fds[i]);
  free (plan->join_fds);
  memset (plan, 0, sizeof *plan);
}

static int
join_one (const struct sr_ns_plan *plan, int flag, sr_error **err)
{
  for (size_t i = 0; i < plan->join_len; i++)
    {
      int fd = plan->join_fds[i];
      if (fd < 0 || ioctl (fd, NS_GET_NSTYPE) != flag)
        continue;
      if (setns (fd, flag) < 0)
        {
          const char *name = "?";
          for (size_t k = 0; k < ARRAY_SIZE (ns_types); k++)
            if (ns_types[k].flag == flag)
              name = ns_types[k].name;
          return sr_fail (err, errno, "join %s namespace", name);
        }
    }
  return 0;
}

int
sr_ns_join (const struct sr_ns_plan *plan, int which, sr_error **err)
{
  which &= plan->join_flags;
  /* The user namespace first: the others may be owned by it. */
  if ((which & CLONE_NEWUSER) && join_one (plan, CLONE_NEWUSER, err) < 0)
    return -1;
  for (size_t k = 0; k < ARRAY_SIZE (ns_types); k++)
    {
      int flag = ns_types[k].flag;
      if (flag != CLONE_NEWUSER && (which & flag) && join_one (plan, flag, err) < 0)
        return -1;
    }
  return 0;
}

static char *
format_id_map (const oci_id_mapping *m, size_t n)
{
  char *out = xstrdup ("");
  for (size_t i = 0; i < n; i++)
    {
      char *next = xasprintf ("%s%u %u %u\n", out, m[i].container_id, m[i].host_id, m[i].size);
      free (out);
      out = next;
    }
  return out;
}

int
sr_ns_write_id_maps (pid_t pid, const oci_linux *l, sr_error **err)
{
  _cleanup_free_ char *uid_map = format_id_map (l->uid_mappings, l->uid_mappings_len);
  _cleanup_free_ char *gid_map = format_id_map (l->gid_mappings, l->gid_mappings_len);
  _cleanup_free_ char *uid_path = xasprintf ("%d/uid_map", (int) pid);
  _cleanup_free_ char *gid_path = xasprintf ("%d/gid_map", (int) pid);

  if (sr_procfs_write (uid_path, uid_map, err) < 0)
    return sr_wrap (err, "write uid mappings");
  if (sr_procfs_write (gid_path, gid_map, err) < 0)
    return sr_wrap (err, "write gid mappings");
  return 0;
}

int
sr_ns_write_time_offsets (pid_t pid, const oci_linux *l, sr_error **err)
{
  _cleanup_free_ char *text = xstrdup ("");
  for (size_t i = 0; i < l->time_offsets_len; i++)
    {
      const oci_time_offset *t = &l->time_offsets[i];
      if (strcmp (t->clock, "monotonic") != 0 && strcmp (t->clock, "boottime") != 0)
        return sr_fail (err, EINVAL, "linux.timeOffsets: unknown clock \"%s\"", t->clock);
      char *next = xasprintf ("%s%s %lld %u\n", text, t->clock, (long long) t->secs, t->nanosecs);
      free (text);
      text = next;
    }
  _cleanup_free_ char *path = xasprintf ("%d/timens_offsets", (int) pid);
  if (sr_procfs_write (path, text, err) < 0)
    return sr_wrap (err, "write time offsets");
  return 0;
}
