/* libsystemd, loaded when the systemd cgroup driver is first used.
 *
 * Linked, libsystemd and the five libraries it pulls in (gcrypt, gpg-error,
 * lzma, zstd, lz4) are mapped, relocated and constructed in every sandrun
 * process: about a million instructions and a dozen mmaps before main, paid
 * twice per container start because of the CVE-2019-5736 re-execution, for a
 * driver only `--systemd-cgroup` uses.  So the binary does not link it: these
 * definitions stand in for the sd-bus functions systemd_bus.c calls and
 * forward to the library's, opened with dlopen on first use. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>

#include "internal.h"

#ifdef HAVE_SYSTEMD

#include <systemd/sd-bus.h>

#define LIBSYSTEMD "libsystemd.so.0"

static void *lib;

int
sr_sd_bus_load (sr_error **err)
{
  if (lib == NULL)
    lib = dlopen (LIBSYSTEMD, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    return sr_fail (err, ELIBACC, "the systemd cgroup driver needs %s: %s",
                    LIBSYSTEMD, dlerror ());
  return 0;
}

static void *
sym (const char *name)
{
  return sr_sd_bus_load (NULL) < 0 ? NULL : dlsym (lib, name);
}

/* NAME, forwarded: resolved once; FAIL when the library or the symbol is
 * missing (sr_sd_bus_open loads the library first and says why). */
#define FORWARD(ret, name, params, args, fail)                                 \
  ret name params                                                              \
  {                                                                            \
    static ret(*fn) params;                                                    \
    if (fn == NULL)                                                            \
      fn = (ret(*) params) sym (#name);                                        \
    if (fn == NULL)                                                            \
      return fail;                                                             \
    return fn args;                                                            \
  }

FORWARD (int, sd_bus_open_system, (sd_bus * *ret), (ret), -ELIBACC)
FORWARD (sd_bus *, sd_bus_flush_close_unref, (sd_bus * bus), (bus), NULL)
FORWARD (int, sd_bus_error_is_set, (const sd_bus_error *e), (e), 0)
FORWARD (int, sd_bus_error_has_name, (const sd_bus_error *e, const char *n),
         (e, n), 0)
FORWARD (int, sd_bus_get_property_string,
         (sd_bus * bus, const char *dest, const char *path, const char *iface,
          const char *member, sd_bus_error *ret_error, char **ret),
         (bus, dest, path, iface, member, ret_error, ret), -ELIBACC)
FORWARD (int, sd_bus_message_new_method_call,
         (sd_bus * bus, sd_bus_message **m, const char *dest, const char *path,
          const char *iface, const char *member),
         (bus, m, dest, path, iface, member), -ELIBACC)
FORWARD (int, sd_bus_message_appendv,
         (sd_bus_message * m, const char *types, va_list ap), (m, types, ap),
         -ELIBACC)
FORWARD (int, sd_bus_message_append_array,
         (sd_bus_message * m, char type, const void *ptr, size_t size),
         (m, type, ptr, size), -ELIBACC)
FORWARD (int, sd_bus_message_open_container,
         (sd_bus_message * m, char type, const char *contents),
         (m, type, contents), -ELIBACC)
FORWARD (int, sd_bus_message_close_container, (sd_bus_message * m), (m),
         -ELIBACC)
FORWARD (int, sd_bus_message_readv,
         (sd_bus_message * m, const char *types, va_list ap), (m, types, ap),
         -ELIBACC)
FORWARD (sd_bus_message *, sd_bus_message_unref, (sd_bus_message * m), (m),
         NULL)
FORWARD (sd_bus_slot *, sd_bus_slot_unref, (sd_bus_slot * slot), (slot), NULL)
FORWARD (int, sd_bus_call,
         (sd_bus * bus, sd_bus_message *m, uint64_t usec,
          sd_bus_error *ret_error, sd_bus_message **reply),
         (bus, m, usec, ret_error, reply), -ELIBACC)
FORWARD (int, sd_bus_call_methodv,
         (sd_bus * bus, const char *dest, const char *path, const char *iface,
          const char *member, sd_bus_error *ret_error, sd_bus_message **reply,
          const char *types, va_list ap),
         (bus, dest, path, iface, member, ret_error, reply, types, ap),
         -ELIBACC)
FORWARD (int, sd_bus_process, (sd_bus * bus, sd_bus_message **r), (bus, r),
         -ELIBACC)
FORWARD (int, sd_bus_wait, (sd_bus * bus, uint64_t timeout_usec),
         (bus, timeout_usec), -ELIBACC)
FORWARD (int, sd_bus_match_signal,
         (sd_bus * bus, sd_bus_slot **ret, const char *sender, const char *path,
          const char *iface, const char *member,
          sd_bus_message_handler_t callback, void *userdata),
         (bus, ret, sender, path, iface, member, callback, userdata), -ELIBACC)

void
sd_bus_error_free (sd_bus_error *e)
{
  static void (*fn) (sd_bus_error *);
  if (fn == NULL)
    fn = (void (*) (sd_bus_error *)) sym ("sd_bus_error_free");
  if (fn != NULL)
    fn (e);
}

/* The variadic calls go through the library's va_list forms. */
int
sd_bus_message_append (sd_bus_message *m, const char *types, ...)
{
  va_list ap;
  va_start (ap, types);
  int r = sd_bus_message_appendv (m, types, ap);
  va_end (ap);
  return r;
}

int
sd_bus_message_read (sd_bus_message *m, const char *types, ...)
{
  va_list ap;
  va_start (ap, types);
  int r = sd_bus_message_readv (m, types, ap);
  va_end (ap);
  return r;
}

int
sd_bus_call_method (sd_bus *bus, const char *dest, const char *path,
                    const char *iface, const char *member,
                    sd_bus_error *ret_error, sd_bus_message **reply,
                    const char *types, ...)
{
  va_list ap;
  va_start (ap, types);
  int r = sd_bus_call_methodv (bus, dest, path, iface, member, ret_error,
                               reply, types, ap);
  va_end (ap);
  return r;
}

#endif
