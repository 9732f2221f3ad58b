#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sandrun/util.h"

static void __attribute__ ((noreturn))
oom (void)
{
  static const char msg[] = "sandrun: out of memory\n";
  if (write (2, msg, sizeof msg - 1) < 0)
    abort ();
  abort ();
}

void *
xmalloc (size_t n)
{
  void *p = malloc (n ? n : 1);
  if (p == NULL)
    oom ();
  return p;
}

void *
xcalloc (size_t nmemb, size_t size)
{
  void *p = calloc (nmemb ? nmemb : 1, size ? size : 1);
  if (p == NULL)
    oom ();
  return p;
}

void *
xrealloc (void *p, size_t n)
{
  p = realloc (p, n ? n : 1);
  if (p == NULL)
    oom ();
  return p;
}

char *
xstrdup (const char *s)
{
  char *p = strdup (s);
  if (p == NULL)
    oom ();
  return p;
}

char *
xstrndup (const char *s, size_t n)
{
  char *p = strndup (s, n);
  if (p == NULL)
    oom ();
  return p;
}

char *
xvasprintf (const char *fmt, va_list ap)
{
  char *p;
  if (vasprintf (&p, fmt, ap) < 0)
    oom ();
  return p;
}

char *
xasprintf (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *p = xvasprintf (fmt, ap);
  va_end (ap);
  return p;
}

void
sr_freep (void *p)
{
  free (*(void **) p);
}

void
sr_close (int fd)
{
  if (fd < 0)
    return;
  int saved = errno;
  close (fd);
  errno = saved;
}

static int
cmp_int (const void *a, const void *b)
{
  int x = *(const int *) a, y = *(const int *) b;
  return (x > y) - (x < y);
}

void
sr_close_fds_except (int first, const int *keep, size_t n)
{
  int *sorted = xcalloc (n + 1, sizeof (int));
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (keep[i] >= first)
      sorted[m++] = keep[i];
  qsort (sorted, m, sizeof (int), cmp_int);

  /* close_range over each gap between the fds to keep. */
  unsigned int from = (unsigned int) first;
  for (size_t i = 0; i <= m; i++)
    {
      unsigned int to = i < m ? (unsigned int) sorted[i] : ~0U;
      if (to > from && syscall (SYS_close_range, from, to == ~0U ? to : to - 1, 0) < 0)
        for (unsigned int fd = from; fd < to && fd < 65536; fd++)
          close ((int) fd);
      if (i < m)
        from = (unsigned int) sorted[i] + 1;
    }
  free (sorted);
}

void
sr_closep (int *fd)
{
  sr_close (*fd);
  *fd = -1;
}

void
sr_fclosep (FILE **f)
{
  if (*f != NULL)
    fclose (*f);
}

void
sr_closedirp (void *d)
{
  DIR **dir = d;
  if (*dir != NULL)
    closedir (*dir);
}

size_t
strv_len (char *const *v)
{
  size_t n = 0;
  while (v != NULL && v[n] != NULL)
    n++;
  return n;
}

void
strv_free (char **v)
{
  for (size_t i = 0; v != NULL && v[i] != NULL; i++)
    free (v[i]);
  free (v);
}

void
sr_strv_freep (char ***v)
{
  strv_free (*v);
  *v = NULL;
}

char **
strv_dup (char *const *v)
{
  size_t n = strv_len (v);
  char **r = xcalloc (n + 1, sizeof *r);
  for (size_t i = 0; i < n; i++)
    r[i] = xstrdup (v[i]);
  return r;
}

void
strv_append (char ***v, const char *s)
{
  size_t n = strv_len (*v);
  *v = xrealloc (*v, (n + 2) * sizeof **v);
  (*v)[n] = xstrdup (s);
  (*v)[n + 1] = NULL;
}

bool
str_has_prefix (const char *s, const char *prefix)
{
  return strncmp (s, prefix, strlen (prefix)) == 0;
}

bool
str_eq (const char *a, const char *b)
{
  if (a == NULL || b == NULL)
    return a == b;
  return strcmp (a, b) == 0;
}

ssize_t
sr_write_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;
  size_t done = 0;
  while (done < len)
    {
      ssize_t r = write (fd, p + done, len - done);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return -1;
      done += (size_t) r;
    }
  return (ssize_t) done;
}

ssize_t
sr_read_all (int fd, void *buf, size_t len)
{
  char *p = buf;
  size_t done = 0;
  while (done < len)
    {
      ssize_t r = read (fd, p + done, len - done);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return -1;
      if (r == 0)
        break;
      done += (size_t) r;
    }
  return (ssize_t) done;
}

int
sr_read_file_at (int dirfd, const char *path, size_t max_size, char **out,
                 size_t *len, sr_error **err)
{
  _cleanup_close_ int fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return sr_fail (err, errno, "open \"%s\"", path);

  size_t cap = max_size < 4096 ? max_size : 4096, used = 0;
  _cleanup_free_ char *buf = xmalloc (cap + 2);
  for (;;)
    {
      if (used == cap)
        {
          /* Full at the limit: one more byte means the file is too big. */
          char probe;
          ssize_t more = cap >= max_size ? read (fd, &probe, 1) : 1;
          if (more < 0 && errno == EINTR)
            continue;
          if (cap >= max_size && more > 0)
            return sr_fail (err, EFBIG, "read \"%s\"", path);
          if (cap >= max_size)
            break;
          cap = cap * 2 > max_size ? max_size : cap * 2;
          buf = xrealloc (buf, cap + 2);
        }
      ssize_t r = read (fd, buf + used, cap - used);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return sr_fail (err, errno, "read \"%s\"", path);
      if (r == 0)
        break;
      used += (size_t) r;
    }
  buf[used] = '\0';
  if (len != NULL)
    *len = used;
  *out = steal_pointer (&buf);
  return 0;
}

int
sr_write_file_at (int dirfd, const char *path, const void *buf, size_t len,
                  sr_error **err)
{
  _cleanup_close_ int fd = openat (dirfd, path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return sr_fail (err, errno, "open \"%s\"", path);
  if (sr_write_all (fd, buf, len) < 0)
    return sr_fail (err, errno, "write \"%s\"", path);
  return 0;
}

int
sr_parse_long (const char *s, long *out)
{
  char *end;
  if (s == NULL || *s == '\0')
    return -1;
  errno = 0;
  long v = strtol (s, &end, 10);
  if (errno != 0 || *end != '\0')
    return -1;
  *out = v;
  return 0;
}

int
sr_parse_u64 (const char *s, unsigned long long *out)
{
  char *end;
  if (s == NULL || *s == '\0' || *s == '-')
    return -1;
  errno = 0;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno != 0 || *end != '\0')
    return -1;
  *out = v;
  return 0;
}

int64_t
sr_monotonic_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *
sr_now_rfc3339 (void)
{
  struct timespec ts;
  struct tm tm;
  char stamp[64];

  clock_gettime (CLOCK_REALTIME, &ts);
  gmtime_r (&ts.tv_sec, &tm);
  strftime (stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  return xasprintf ("%s.%09ldZ", stamp, ts.tv_nsec);
}

static char *env_block;
static size_t env_block_len;

void
sr_environ_note (char **envp)
{
  size_t n = 0;
  while (envp[n] != NULL)
    n++;
  if (n == 0)
    return;
  /* The kernel writes the strings one after the other, in order. */
  env_block = envp[0];
  env_block_len = (size_t) (envp[n - 1] + strlen (envp[n - 1]) + 1 - envp[0]);
}

void
sr_environ_wipe (void)
{
  if (env_block != NULL)
    memset (env_block, 0, env_block_len);
  clearenv ();
}
