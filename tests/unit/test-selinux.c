/* linux.mountLabel: the context= option each filesystem type gets (or not),
 * appended to the existing data as mount(2) takes it, and the labels the
 * checks refuse.  The host needs no SELinux: nothing here mounts. */
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../src/core/linux_attrs_internal.h"
#include "core/linux_attrs.h"
#include "core/mountopt.h"
#include "sandrun/util.h"
#include "unit.h"

#define LABEL "system_u:object_r:container_file_t:s0:c1,c2"

/* The mount(2) data string of `fstype` with `data` (NULL-terminated)
 * labelled with `label`; NULL when it gets no label. */
static char *
labelled_data (const char *fstype, char **data, const char *label)
{
  _cleanup_strv_ char **out = sr_selinux_mount_data (data, fstype, label);
  struct sr_mount_opts o = { .data = out };

  if (out == NULL)
    return NULL;
  return sr_mount_opts_data (&o);
}

static void
test_mount_data (void)
{
  char *none[] = { NULL };
  char *tmp[] = { "size=65536k", "mode=755", NULL };
  char *pts[] = { "newinstance", "ptmxmode=0666", "mode=0620", "gid=5", NULL };
  char *ro_data[] = { "lowerdir=/a", NULL };
  char *s;

  s = labelled_data ("tmpfs", tmp, LABEL);
  CHECK_STR (s, "size=65536k,mode=755,context=\"" LABEL "\"",
             "tmpfs: appended with a comma, the label quoted");
  free (s);
  s = labelled_data ("devpts", pts, LABEL);
  CHECK_STR (s,
             "newinstance,ptmxmode=0666,mode=0620,gid=5,context=\"" LABEL "\"",
             "devpts: labelled");
  free (s);
  s = labelled_data ("tmpfs", NULL, LABEL);
  CHECK_STR (s, "context=\"" LABEL "\"", "no data: the label alone");
  free (s);
  s = labelled_data ("tmpfs", none, "system_u:object_r:container_file_t:s0");
  CHECK_STR (s, "context=\"system_u:object_r:container_file_t:s0\"",
             "a label without categories is quoted too");
  free (s);
  s = labelled_data ("overlay", ro_data, LABEL);
  CHECK_STR (s, "lowerdir=/a,context=\"" LABEL "\"",
             "another filesystem type: labelled (as runc)");
  free (s);

  static const char *const unlabelled[] = {
    "proc", "sysfs", "cgroup", "cgroup2", "mqueue", "bind",
  };
  for (size_t i = 0; i < ARRAY_SIZE (unlabelled); i++)
    CHECK (sr_selinux_mount_data (tmp, unlabelled[i], LABEL) == NULL,
           "%s: no context=", unlabelled[i]);
  CHECK (sr_selinux_mount_data (tmp, NULL, LABEL) == NULL, "no type: none");

  CHECK (sr_selinux_mount_data (tmp, "tmpfs", NULL) == NULL, "no label");
  CHECK (sr_selinux_mount_data (tmp, "tmpfs", "") == NULL, "empty label");
  CHECK (sr_selinux_mount_data (tmp, "tmpfs", "a:b:c:s0\",x=\"y") == NULL,
         "a label with a double quote is never formatted");
  CHECK (sr_selinux_mount_data (tmp, "tmpfs", "a:b:c:s0\nx") == NULL,
         "a label with a line break is never formatted");
  CHECK (strcmp (tmp[0], "size=65536k") == 0 && strcmp (tmp[1], "mode=755")
             == 0 && tmp[2] == NULL,
         "the original data is left as it was");
}

static void
test_mount_root_label (void)
{
  _cleanup_error_ sr_error *err = NULL;

  /* An invalid fd: only mqueue with a label may touch it. */
  CHECK (sr_selinux_label_mount_root (-1, "tmpfs", LABEL, &err) == 0,
         "tmpfs root: left to context=");
  CHECK (sr_selinux_label_mount_root (-1, "mqueue", "", &err) == 0,
         "mqueue without a label: nothing");
  CHECK (sr_selinux_label_mount_root (-1, "mqueue", LABEL, &err) < 0 && err,
         "mqueue with a label: its root is labelled (fails on a bad fd)");
}

/* The attribute itself, on a directory standing in for the mqueue root:
 * without SELinux, root may still write security.selinux on most
 * filesystems (a plain attribute then). */
static void
test_mount_root_xattr (void)
{
  _cleanup_error_ sr_error *err = NULL;
  char dir[] = "/tmp/sandrun-test-selinux-XXXXXX";
  char got[128] = "";
  _cleanup_close_ int fd = -1;
  ssize_t n;

  if (mkdtemp (dir) == NULL)
    {
      CHECK (false, "mkdtemp");
      return;
    }
  fd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (sr_selinux_label_mount_root (fd, "mqueue", LABEL, &err) < 0)
    printf ("ok %d - # SKIP security.selinux not writable here: %s\n",
            ++unit_n, err->msg);
  else
    {
      n = getxattr (dir, "security.selinux", got, sizeof got - 1);
      CHECK (n > 0 && strncmp (got, LABEL, (size_t) n) == 0,
             "mqueue root: security.selinux is the label");
    }
  rmdir (dir);
}

/* sr_selinux_check's message for a config with these labels, or NULL. */
static char *
check_message (const char *process_label, const char *mount_label)
{
  _cleanup_error_ sr_error *err = NULL;
  oci_process p = { .selinux_label = (char *) process_label };
  oci_linux l = { .mount_label = (char *) mount_label };
  oci_config cfg = { .process = &p, .linux_ = &l };

  if (sr_selinux_check (&cfg, &err) == 0)
    return NULL;
  return xstrdup (err->msg);
}

static void
test_checks (void)
{
  bool enabled = sr_selinux_host_enabled ();
  char *m;

  m = check_message (NULL, "a:b:c:s0\"");
  CHECK_STR (m, "linux.mountLabel: a double quote in the label",
             "mountLabel with a double quote: refused");
  free (m);
  m = check_message (NULL, "a:b:c:s0\nx");
  CHECK_STR (m, "linux.mountLabel: a line break in the label",
             "mountLabel with a line break: refused");
  free (m);
  m = check_message ("a:b:c:s0\rx", NULL);
  CHECK_STR (m, "process.selinuxLabel: a line break in the label",
             "selinuxLabel with a line break: refused");
  free (m);
  m = check_message ("", LABEL);
  CHECK_STR (m, NULL, "a usable mountLabel passes (warned without SELinux)");
  free (m);
  m = check_message ("", "");
  CHECK_STR (m, NULL, "empty labels are unset");
  free (m);

  oci_linux l = { .mount_label = LABEL };
  oci_config cfg = { .linux_ = &l };
  CHECK_STR (sr_selinux_mount_label (&cfg), enabled ? LABEL : NULL,
             "the label applies only where SELinux is enabled (%s here)",
             enabled ? "enabled" : "not enabled");
  l.mount_label = "a:b:c:s0\"";
  CHECK (sr_selinux_mount_label (&cfg) == NULL,
         "a refused label is never applied");
  oci_config bare = { 0 };
  CHECK (sr_selinux_mount_label (&bare) == NULL, "no linux object");
}

int
main (void)
{
  test_mount_data ();
  test_mount_root_label ();
  test_mount_root_xattr ();
  test_checks ();
  return unit_finish ();
}
