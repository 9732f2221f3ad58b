/* Small shared helpers: aborting allocators, cleanup attributes, ownership
 * steals, string vectors, whole-file I/O.  Out-of-memory is not an error path:
 * the x* allocators abort. */
#ifndef SANDRUN_UTIL_H
#define SANDRUN_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "sandrun/error.h"

#define LIKELY(x) __builtin_expect (!!(x), 1)
#define UNLIKELY(x) __builtin_expect (!!(x), 0)
#define ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))

void *xmalloc (size_t n);
void *xcalloc (size_t nmemb, size_t size);
void *xrealloc (void *p, size_t n);
char *xstrdup (const char *s);
char *xstrndup (const char *s, size_t n);
char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
char *xvasprintf (const char *fmt, va_list ap) __attribute__ ((format (printf, 1, 0)));

/* Cleanup attributes.  Always initialise: `_cleanup_free_ char *p = NULL;`,
 * `_cleanup_close_ int fd = -1;`. */
void sr_freep (void *p);
void sr_closep (int *fd);
void sr_fclosep (FILE **f);
void sr_closedirp (void *d);
void sr_strv_freep (char ***v);
#define _cleanup_free_ __attribute__ ((cleanup (sr_freep)))
#define _cleanup_close_ __attribute__ ((cleanup (sr_closep)))
#define _cleanup_fclose_ __attribute__ ((cleanup (sr_fclosep)))
#define _cleanup_closedir_ __attribute__ ((cleanup (sr_closedirp)))
#define _cleanup_strv_ __attribute__ ((cleanup (sr_strv_freep)))

/* Take ownership out of a cleanup variable. */
static inline void *
sr_steal_ptr (void *pp)
{
  void **p = (void **) pp;
  void *v = *p;
  *p = NULL;
  return v;
}
#define steal_pointer(pp) sr_steal_ptr (pp)
static inline int
steal_fd (int *fd)
{
  int v = *fd;
  *fd = -1;
  return v;
}

/* close() that keeps errno and ignores negative fds. */
void sr_close (int fd);

/* Close every fd >= first except those in keep[] (negative entries are
 * ignored). */
void sr_close_fds_except (int first, const int *keep, size_t n);

/* NULL-terminated string vectors. */
size_t strv_len (char *const *v);
void strv_free (char **v);
char **strv_dup (char *const *v);
void strv_append (char ***v, const char *s);

bool str_has_prefix (const char *s, const char *prefix);
bool str_eq (const char *a, const char *b); /* NULL-safe */

/* Whole-fd and whole-file I/O, retrying on EINTR and short counts. */
ssize_t sr_write_all (int fd, const void *buf, size_t len);
ssize_t sr_read_all (int fd, void *buf, size_t len);
/* Read a whole file (at most max_size bytes, else EFBIG) into a NUL-terminated
 * buffer. */
int sr_read_file_at (int dirfd, const char *path, size_t max_size, char **out,
                     size_t *len, sr_error **err);
/* Write `len` bytes to an existing file (O_WRONLY|O_CLOEXEC, no O_CREAT). */
int sr_write_file_at (int dirfd, const char *path, const void *buf, size_t len,
                      sr_error **err);

/* Parse a base-10 integer with full validation (no trailing junk, range). */
int sr_parse_long (const char *s, long *out);
int sr_parse_u64 (const char *s, unsigned long long *out);

/* The environment block the kernel laid out for this process (what
 * /proc/PID/environ reads, whatever setenv did since): noted by main from its
 * envp, zeroed by a runtime process that enters a container, whose pid
 * namespace could otherwise read the engine's environment there. */
void sr_environ_note (char **envp);
void sr_environ_wipe (void);

/* Milliseconds of CLOCK_MONOTONIC: for timeouts and intervals. */
int64_t sr_monotonic_ms (void);

/* The current time as RFC 3339 with nanoseconds, UTC. */
char *sr_now_rfc3339 (void);

#endif
