/* The systemd driver's D-Bus calls (sd-bus): start, stop and change
 * transient units on org.freedesktop.systemd1, waiting for their jobs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "core/cgroup/cgroup_systemd.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

#ifdef HAVE_SYSTEMD

#include <systemd/sd-bus.h>

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
/* runc waits 30 s for a job; a method call gets the same. */
#define TIMEOUT_MS 30000
#define TIMEOUT_USEC (TIMEOUT_MS * 1000ULL)

struct sr_sd_bus
{
  sd_bus *bus;
};

#define _cleanup_bus_error_ __attribute__ ((cleanup (sd_bus_error_free)))
#define _cleanup_bus_message_ __attribute__ ((cleanup (sd_bus_message_unrefp)))
#define _cleanup_bus_slot_ __attribute__ ((cleanup (sd_bus_slot_unrefp)))

bool
sr_cgroup_systemd_built (void)
{
  return true;
}

int
sr_sd_bus_open (sr_sd_bus **out, sr_error **err)
{
  sd_bus *bus = NULL;
  if (sr_sd_bus_load (err) < 0)
    return -1;
  /* The system bus, or DBUS_SYSTEM_BUS_ADDRESS. */
  int r = sd_bus_open_system (&bus);
  if (r < 0)
    return sr_fail (err, -r, "connect to the system bus");
  *out = xcalloc (1, sizeof **out);
  (*out)->bus = bus;
  return 0;
}

void
sr_sd_bus_close (sr_sd_bus *b)
{
  if (b == NULL)
    return;
  sd_bus_flush_close_unref (b->bus);
  free (b);
}

/* "NAME: MESSAGE" of a D-Bus error, errno as sd-bus maps it. */
static int
fail_bus (sr_error **err, const sd_bus_error *e, int r, const char *what,
          const char *unit)
{
  if (sd_bus_error_is_set (e))
    return sr_fail (err, 0, "%s \"%s\": %s", what, unit,
                    e->message ? e->message : e->name);
  return sr_fail (err, -r, "%s \"%s\"", what, unit);
}

int
sr_sd_bus_version (sr_sd_bus *b, int *version, sr_error **err)
{
  _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
  _cleanup_free_ char *v = NULL;
  int r = sd_bus_get_property_string (b->bus, SD_DEST, SD_PATH, SD_MANAGER,
                                      "Version", &e, &v);
  if (r < 0)
    return fail_bus (err, &e, r, "ask for the version of", SD_DEST);
  *version = sr_sd_parse_version (v);
  sr_debug ("systemd: version \"%s\"", v);
  return 0;
}

static int
append_variant (sd_bus_message *m, const struct sr_sd_prop *p)
{
  int r;
  switch (p->type)
    {
    case SR_SD_STRING:
      return sd_bus_message_append (m, "v", "s", p->str);
    case SR_SD_BOOL:
      return sd_bus_message_append (m, "v", "b", (int) p->b);
    case SR_SD_U64:
      return sd_bus_message_append (m, "v", "t", p->u64);
    case SR_SD_U32S:
    case SR_SD_BYTES:
      {
        bool u32 = p->type == SR_SD_U32S;
        r = sd_bus_message_open_container (m, 'v', u32 ? "au" : "ay");
        if (r >= 0)
          r = sd_bus_message_append_array (m, u32 ? 'u' : 'y',
                                           u32 ? (void *) p->u32s
                                               : (void *) p->bytes,
                                           p->len * (u32 ? 4 : 1));
        return r < 0 ? r : sd_bus_message_close_container (m);
      }
    case SR_SD_DEVICES:
      r = sd_bus_message_open_container (m, 'v', "a(ss)");
      if (r >= 0)
        r = sd_bus_message_open_container (m, 'a', "(ss)");
      for (size_t i = 0; r >= 0 && i < p->len; i++)
        r = sd_bus_message_append (m, "(ss)", p->devs[i].path,
                                   p->devs[i].perms);
      if (r >= 0)
        r = sd_bus_message_close_container (m);
      return r < 0 ? r : sd_bus_message_close_container (m);
    }
  return -EINVAL;
}

/* a(sv) */
static int
append_props (sd_bus_message *m, const struct sr_sd_props *props)
{
  int r = sd_bus_message_open_container (m, 'a', "(sv)");
  for (size_t i = 0; r >= 0 && i < props->len; i++)
    {
      r = sd_bus_message_open_container (m, 'r', "sv");
      if (r >= 0)
        r = sd_bus_message_append (m, "s", props->v[i].name);
      if (r >= 0)
        r = append_variant (m, &props->v[i]);
      if (r >= 0)
        r = sd_bus_message_close_container (m);
    }
  return r < 0 ? r : sd_bus_message_close_container (m);
}

/* ---- jobs ------------------------------------------------------------------ */

struct job_wait
{
  char *job;    /* the object path StartUnit & co. returned */
  char *result; /* of its JobRemoved: "done", "failed", "timeout", ... */
};

static int
on_job_removed (sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
  struct job_wait *w = userdata;
  uint32_t id;
  const char *path, *unit, *result;
  (void) ret_error;
  if (sd_bus_message_read (m, "uoss", &id, &path, &unit, &result) < 0)
    return 0;
  if (w->job != NULL && w->result == NULL && strcmp (path, w->job) == 0)
    w->result = xstrdup (result);
  return 0;
}

static int
wait_job (sd_bus *bus, struct job_wait *w, const char *what, const char *unit,
          sr_error **err)
{
  int64_t deadline = sr_monotonic_ms () + TIMEOUT_MS;
  while (w->result == NULL)
    {
      int r = sd_bus_process (bus, NULL);
      if (r > 0)
        continue;
      int64_t now = sr_monotonic_ms ();
      if (r >= 0 && now >= deadline)
        return sr_fail (err, ETIMEDOUT, "%s \"%s\": systemd did not finish "
                        "the job in %d s", what, unit, TIMEOUT_MS / 1000);
      if (r >= 0)
        r = sd_bus_wait (bus, (uint64_t) (deadline - now) * 1000);
      if (r < 0)
        return sr_fail (err, -r, "%s \"%s\": wait for systemd", what, unit);
    }
  if (strcmp (w->result, "done") != 0)
    return sr_fail (err, 0, "%s \"%s\": the job ended with \"%s\"", what, unit,
                    w->result);
  return 0;
}

static int
new_call (sd_bus *bus, const char *method, sd_bus_message **m)
{
  return sd_bus_message_new_method_call (bus, m, SD_DEST, SD_PATH, SD_MANAGER,
                                         method);
}

/* Send `m`, which returns a job, and wait for the job's end.  *e is set when
 * systemd refused the call. */
static int
call_and_wait (sd_bus *bus, sd_bus_message *m, const char *what,
               const char *unit, sd_bus_error *e, sr_error **err)
{
  struct job_wait w = { NULL, NULL };
  _cleanup_bus_slot_ sd_bus_slot *slot = NULL;
  _cleanup_bus_message_ sd_bus_message *reply = NULL;
  const char *job;

  /* Before the call: the signal may come before its reply. */
  int r = sd_bus_match_signal (bus, &slot, SD_DEST, SD_PATH, SD_MANAGER,
                               "JobRemoved", on_job_removed, &w);
  if (r < 0)
    return sr_fail (err, -r, "%s \"%s\": subscribe to JobRemoved", what, unit);
  r = sd_bus_call (bus, m, TIMEOUT_USEC, e, &reply);
  if (r < 0)
    return fail_bus (err, e, r, what, unit);
  r = sd_bus_message_read (reply, "o", &job);
  if (r < 0)
    return sr_fail (err, -r, "%s \"%s\": read the reply", what, unit);
  w.job = xstrdup (job);
  r = wait_job (bus, &w, what, unit, err);
  free (w.job);
  free (w.result);
  return r;
}

static void
reset_failed (sd_bus *bus, const char *unit)
{
  sd_bus_call_method (bus, SD_DEST, SD_PATH, SD_MANAGER, "ResetFailedUnit",
                      NULL, NULL, "s", unit);
}

static int
start_once (sd_bus *bus, const char *unit, const struct sr_sd_props *props,
            sd_bus_error *e, sr_error **err)
{
  _cleanup_bus_message_ sd_bus_message *m = NULL;
  int r = new_call (bus, "StartTransientUnit", &m);
  if (r >= 0)
    r = sd_bus_message_append (m, "ss", unit, "replace");
  if (r >= 0)
    r = append_props (m, props);
  if (r >= 0) /* no auxiliary units */
    r = sd_bus_message_append (m, "a(sa(sv))", 0);
  if (r < 0)
    return sr_fail (err, -r, "start unit \"%s\": build the message", unit);
  return call_and_wait (bus, m, "start unit", unit, e, err);
}

int
sr_sd_start_unit (sr_sd_bus *b, const char *unit,
                  const struct sr_sd_props *props, sr_error **err)
{
  _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
  if (start_once (b->bus, unit, props, &e, err) == 0)
    return 0;
  if (!sd_bus_error_has_name (&e, "org.freedesktop.systemd1.UnitExists"))
    {
      reset_failed (b->bus, unit);
      return -1;
    }
  /* A failed unit of that name is left over: have systemd forget it and
   * try once more (as runc).  A live one stays an error. */
  if (err != NULL)
    sr_error_freep (err);
  sd_bus_error_free (&e);
  reset_failed (b->bus, unit);
  return start_once (b->bus, unit, props, &e, err);
}

int
sr_sd_stop_unit (sr_sd_bus *b, const char *unit, sr_error **err)
{
  _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
  _cleanup_bus_message_ sd_bus_message *m = NULL;
  int r = new_call (b->bus, "StopUnit", &m);
  if (r >= 0)
    r = sd_bus_message_append (m, "ss", unit, "replace");
  if (r < 0)
    return sr_fail (err, -r, "stop unit \"%s\": build the message", unit);
  r = call_and_wait (b->bus, m, "stop unit", unit, &e, err);
  if (r < 0 && sd_bus_error_has_name (&e, "org.freedesktop.systemd1.NoSuchUnit"))
    {
      if (err != NULL)
        sr_error_freep (err);
      r = 0; /* gone already: an empty scope goes by itself */
    }
  reset_failed (b->bus, unit);
  return r;
}

int
sr_sd_set_unit_props (sr_sd_bus *b, const char *unit,
                      const struct sr_sd_props *props, sr_error **err)
{
  _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
  _cleanup_bus_message_ sd_bus_message *m = NULL;
  int r = new_call (b->bus, "SetUnitProperties", &m);
  if (r >= 0) /* runtime: not written to /etc */
    r = sd_bus_message_append (m, "sb", unit, 1);
  if (r >= 0)
    r = append_props (m, props);
  if (r < 0)
    return sr_fail (err, -r, "set properties of unit \"%s\": build the "
                    "message", unit);
  r = sd_bus_call (b->bus, m, TIMEOUT_USEC, &e, NULL);
  if (r < 0)
    return fail_bus (err, &e, r, "set properties of unit", unit);
  return 0;
}

#else /* !HAVE_SYSTEMD */

struct sr_sd_bus
{
  int unused;
};

bool
sr_cgroup_systemd_built (void)
{
  return false;
}

int
sr_sd_bus_open (sr_sd_bus **out, sr_error **err)
{
  *out = NULL;
  return sr_fail (err, ENOTSUP, "sandrun was built without libsystemd "
                  "(configure --enable-systemd)");
}

void
sr_sd_bus_close (sr_sd_bus *b)
{
  free (b);
}

static int
not_built (sr_error **err)
{
  return sr_sd_bus_open (&(sr_sd_bus *){ NULL }, err);
}

int
sr_sd_bus_version (sr_sd_bus *b, int *version, sr_error **err)
{
  *version = -1;
  return not_built (err);
}

int
sr_sd_start_unit (sr_sd_bus *b, const char *unit,
                  const struct sr_sd_props *props, sr_error **err)
{
  return not_built (err);
}

int
sr_sd_stop_unit (sr_sd_bus *b, const char *unit, sr_error **err)
{
  return not_built (err);
}

int
sr_sd_set_unit_props (sr_sd_bus *b, const char *unit,
                      const struct sr_sd_props *props, sr_error **err)
{
  return not_built (err);
}

#endif
