/* A fake systemd for the systemd cgroup driver's tests: owns
 * org.freedesktop.systemd1 on the bus of DBUS_SYSTEM_BUS_ADDRESS (a
 * private dbus-daemon) and answers what sandrun calls:
 *
 *   StartTransientUnit  mkdir CGROOT/<slice path>/<unit> (a slice unit:
 *                       CGROOT/<its path>), move the PIDs there,
 *                       JobRemoved "done"
 *   StopUnit            rmdir it, JobRemoved "done" (NoSuchUnit if unknown)
 *   SetUnitProperties, ResetFailedUnit, the Version property
 *
 * Every call and property is appended to RECORD, properties as
 * "  Name=value" in the format of sr_sd_prop_format.  Units already
 * started are refused with UnitExists.
 *
 * usage: fake-systemd RECORD CGROOT READY-FILE
 * build: cc -o fake-systemd fake-systemd.c $(pkg-config --cflags --libs libsystemd) */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#define MAX_UNITS 64

static FILE *record;
static const char *cgroot;
static struct
{
  char *name, *dir;
} units[MAX_UNITS];
static unsigned job_counter;

static int
find_unit (const char *name)
{
  for (int i = 0; i < MAX_UNITS; i++)
    if (units[i].name != NULL && strcmp (units[i].name, name) == 0)
      return i;
  return -1;
}

/* "a-b.slice" -> "/a.slice/a-b.slice" (valid names only: sandrun checked). */
static void
slice_path (const char *slice, char *out, size_t len)
{
  size_t base = strlen (slice) - strlen (".slice");
  out[0] = '\0';
  if (strcmp (slice, "-.slice") == 0)
    return;
  for (size_t i = 0; i <= base; i++)
    if (i == base || slice[i] == '-')
      snprintf (out + strlen (out), len - strlen (out), "/%.*s.slice", (int) i, slice);
}

static void
mkdir_p (const char *path)
{
  char buf[4096];
  snprintf (buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/')
      {
        *p = '\0';
        mkdir (buf, 0755);
        *p = '/';
      }
  mkdir (buf, 0755);
}

static void
print_variant (sd_bus_message *m)
{
  char type;
  const char *contents;
  sd_bus_message_peek_type (m, &type, &contents);
  sd_bus_message_enter_container (m, 'v', contents);
  if (strcmp (contents, "s") == 0)
    {
      const char *s;
      sd_bus_message_read (m, "s", &s);
      fputs (s, record);
    }
  else if (strcmp (contents, "b") == 0)
    {
      int b;
      sd_bus_message_read (m, "b", &b);
      fputs (b ? "yes" : "no", record);
    }
  else if (strcmp (contents, "t") == 0)
    {
      uint64_t t;
      sd_bus_message_read (m, "t", &t);
      if (t == UINT64_MAX)
        fputs ("infinity", record);
      else
        fprintf (record, "%" PRIu64, t);
    }
  else if (strcmp (contents, "au") == 0 || strcmp (contents, "ay") == 0)
    {
      bool u = contents[1] == 'u';
      const void *data;
      size_t size;
      sd_bus_message_read_array (m, contents[1], &data, &size);
      fputs (u ? "[" : "0x", record);
      for (size_t i = 0; i < size / (u ? 4 : 1); i++)
        if (u)
          fprintf (record, "%s%" PRIu32, i ? " " : "", ((const uint32_t *) data)[i]);
        else
          fprintf (record, "%02x", ((const uint8_t *) data)[i]);
      fputs (u ? "]" : "", record);
    }
  else if (strcmp (contents, "a(ss)") == 0)
    {
      const char *path, *perms;
      bool first = true;
      sd_bus_message_enter_container (m, 'a', "(ss)");
      fputs ("[", record);
      while (sd_bus_message_read (m, "(ss)", &path, &perms) > 0)
        {
          fprintf (record, "%s%s %s", first ? "" : ", ", path, perms);
          first = false;
        }
      fputs ("]", record);
      sd_bus_message_exit_container (m);
    }
  else
    {
      fprintf (record, "(type %s)", contents);
      sd_bus_message_skip (m, contents);
    }
  sd_bus_message_exit_container (m);
}

/* Record a(sv); keep Slice and the PIDs. */
static int
read_props (sd_bus_message *m, char *slice, size_t slice_len, uint32_t *pids, size_t *npids)
{
  const char *name;
  int r = sd_bus_message_enter_container (m, 'a', "(sv)");
  if (r < 0)
    return r;
  while ((r = sd_bus_message_enter_container (m, 'r', "sv")) > 0)
    {
      sd_bus_message_read (m, "s", &name);
      if (slice != NULL && strcmp (name, "Slice") == 0)
        {
          const char *s;
          sd_bus_message_read (m, "v", "s", &s);
          snprintf (slice, slice_len, "%s", s);
          fprintf (record, "  Slice=%s\n", s);
        }
      else if (pids != NULL && strcmp (name, "PIDs") == 0)
        {
          const void *data;
          size_t size;
          sd_bus_message_enter_container (m, 'v', "au");
          sd_bus_message_read_array (m, 'u', &data, &size);
          sd_bus_message_exit_container (m);
          fprintf (record, "  PIDs=[");
          for (size_t i = 0; i < size / 4 && *npids < 16; i++)
            {
              pids[(*npids)++] = ((const uint32_t *) data)[i];
              fprintf (record, "%s%" PRIu32, i ? " " : "", ((const uint32_t *) data)[i]);
            }
          fprintf (record, "]\n");
        }
      else
        {
          fprintf (record, "  %s=", name);
          print_variant (m);
          fputs ("\n", record);
        }
      sd_bus_message_exit_container (m);
    }
  return r < 0 ? r : sd_bus_message_exit_container (m);
}

static int
reply_job (sd_bus_message *m, const char *unit)
{
  char job[64];
  unsigned id = ++job_counter;
  snprintf (job, sizeof job, "/org/freedesktop/systemd1/job/%u", id);
  int r = sd_bus_reply_method_return (m, "o", job);
  if (r < 0)
    return r;
  return sd_bus_emit_signal (sd_bus_message_get_bus (m), "/org/freedesktop/systemd1",
                             "org.freedesktop.systemd1.Manager", "JobRemoved", "uoss", id, job,
                             unit, "done");
}

/* A scope goes in its Slice=, a slice where its own name says. */
static void
unit_dir (const char *slice, const char *unit, char *out, size_t len)
{
  char sp[1024];
  size_t l = strlen (unit);
  bool is_slice = l > 6 && strcmp (unit + l - 6, ".slice") == 0;
  slice_path (is_slice ? unit : slice, sp, sizeof sp);
  snprintf (out, len, "%s%s%s%s", cgroot, sp, is_slice ? "" : "/", is_slice ? "" : unit);
}

static int
start_transient_unit (sd_bus_message *m, void *userdata, sd_bus_error *error)
{
  const char *name, *mode;
  char slice[256] = "system.slice", dir[2048];
  uint32_t pids[16];
  size_t npids = 0;
  (void) userdata;

  int r = sd_bus_message_read (m, "ss", &name, &mode);
  if (r < 0)
    return r;
  fprintf (record, "StartTransientUnit %s %s\n", name, mode);
  r = read_props (m, slice, sizeof slice, pids, &npids);
  fflush (record);
  if (r < 0)
    return r;
  if (find_unit (name) >= 0)
    return sd_bus_error_setf (error, "org.freedesktop.systemd1.UnitExists",
                              "Unit %s already exists.", name);
  unit_dir (slice, name, dir, sizeof dir);
  for (int i = 0; i < MAX_UNITS; i++)
    if (units[i].name == NULL)
      {
        units[i].name = strdup (name);
        units[i].dir = strdup (dir);
        break;
      }
  mkdir_p (dir);
  char procs[2100];
  snprintf (procs, sizeof procs, "%s/cgroup.procs", dir);
  for (size_t i = 0; i < npids; i++)
    {
      FILE *f = fopen (procs, "w");
      if (f != NULL)
        {
          fprintf (f, "%" PRIu32, pids[i]);
          fclose (f);
        }
    }
  return reply_job (m, name);
}

static int
stop_unit (sd_bus_message *m, void *userdata, sd_bus_error *error)
{
  const char *name, *mode;
  (void) userdata;
  int r = sd_bus_message_read (m, "ss", &name, &mode);
  if (r < 0)
    return r;
  fprintf (record, "StopUnit %s %s\n", name, mode);
  fflush (record);
  int i = find_unit (name);
  if (i >= 0)
    {
      rmdir (units[i].dir);
      free (units[i].name);
      free (units[i].dir);
      units[i].name = units[i].dir = NULL;
      return reply_job (m, name);
    }
  return sd_bus_error_setf (error, "org.freedesktop.systemd1.NoSuchUnit",
                            "Unit %s not loaded.", name);
}

static int
set_unit_properties (sd_bus_message *m, void *userdata, sd_bus_error *error)
{
  const char *name;
  int runtime;
  (void) userdata;
  (void) error;
  int r = sd_bus_message_read (m, "sb", &name, &runtime);
  if (r < 0)
    return r;
  fprintf (record, "SetUnitProperties %s %s\n", name, runtime ? "runtime" : "persistent");
  r = read_props (m, NULL, 0, NULL, NULL);
  fflush (record);
  return r < 0 ? r : sd_bus_reply_method_return (m, "");
}

static int
reset_failed_unit (sd_bus_message *m, void *userdata, sd_bus_error *error)
{
  const char *name;
  (void) userdata;
  (void) error;
  int r = sd_bus_message_read (m, "s", &name);
  if (r < 0)
    return r;
  fprintf (record, "ResetFailedUnit %s\n", name);
  fflush (record);
  return sd_bus_reply_method_return (m, "");
}

static int
get_version (sd_bus *bus, const char *path, const char *interface, const char *property,
             sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
  (void) bus, (void) path, (void) interface, (void) property, (void) userdata, (void) error;
  return sd_bus_message_append (reply, "s", "252.99-fake");
}

static const sd_bus_vtable manager_vtable[] = {
  SD_BUS_VTABLE_START (0),
  SD_BUS_PROPERTY ("Version", "s", get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
  SD_BUS_METHOD ("StartTransientUnit", "ssa(sv)a(sa(sv))", "o", start_transient_unit,
                 SD_BUS_VTABLE_UNPRIVILEGED),
  SD_BUS_METHOD ("StopUnit", "ss", "o", stop_unit, SD_BUS_VTABLE_UNPRIVILEGED),
  SD_BUS_METHOD ("SetUnitProperties", "sba(sv)", "", set_unit_properties,
                 SD_BUS_VTABLE_UNPRIVILEGED),
  SD_BUS_METHOD ("ResetFailedUnit", "s", "", reset_failed_unit, SD_BUS_VTABLE_UNPRIVILEGED),
  SD_BUS_SIGNAL ("JobRemoved", "uoss", 0),
  SD_BUS_VTABLE_END,
};

int
main (int argc, char **argv)
{
  sd_bus *bus = NULL;
  if (argc != 4)
    {
      fprintf (stderr, "usage: %s RECORD CGROOT READY-FILE\n", argv[0]);
      return 2;
    }
  record = fopen (argv[1], "a");
  cgroot = argv[2];
  if (record == NULL)
    return perror (argv[1]), 1;
  int r = sd_bus_open_system (&bus);
  if (r >= 0)
    r = sd_bus_add_object_vtable (bus, NULL, "/org/freedesktop/systemd1",
                                  "org.freedesktop.systemd1.Manager", manager_vtable, NULL);
  if (r >= 0)
    r = sd_bus_request_name (bus, "org.freedesktop.systemd1", 0);
  if (r < 0)
    {
      fprintf (stderr, "fake-systemd: %s\n", strerror (-r));
      return 1;
    }
  int ready = open (argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (ready >= 0)
    close (ready);
  for (;;)
    {
      r = sd_bus_process (bus, NULL);
      if (r < 0)
        return 1; /* the bus went away: the test is over */
      if (r == 0 && sd_bus_wait (bus, UINT64_MAX) < 0)
        return 1;
    }
}
