/* The compiled-BPF cache: compiling a big profile with libseccomp costs
 * milliseconds at every start, loading a file does not.  An entry is
 * cache_dir/<sha256 of the canonical profile>, written atomically (tmp +
 * rename, 0600), and carries its own checksum: a short or corrupt entry is
 * ignored (and then rewritten by the caller).  The cache is bounded
 * (CACHE_MAX_ENTRIES, each at most BPF_MAXINSNS instructions, so about
 * 1 MiB): a stream of distinct profiles must not fill the tmpfs under
 * --root; the oldest entries go first. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandrun/log.h"
#include "sandrun/util.h"
#include "seccomp_internal.h"

/* Bump when the way profiles become BPF changes (bad-arch action, rule
 * splitting, ...): old entries then simply stop matching. */
#define CACHE_KEY_TAG "sandrun-seccomp-bpf-v2"

#define CACHE_MAX_ENTRIES 32

#define ENTRY_MAGIC "SRSECBPF"
#define ENTRY_VERSION 1u

struct entry_header
{
  char magic[8];
  uint32_t version;
  uint32_t count;       /* instructions */
  uint8_t checksum[32]; /* SHA-256 of the instructions */
};

/* ---- canonical form: every field, length-prefixed, absent != empty ---- */

static void
hash_u64 (sr_sha256_ctx *c, uint64_t v)
{
  uint8_t b[8];
  int i;
  for (i = 0; i < 8; i++)
    b[i] = (uint8_t) (v >> (8 * i));
  sr_sha256_update (c, b, sizeof b);
}

static void
hash_str (sr_sha256_ctx *c, const char *s)
{
  if (s == NULL)
    {
      hash_u64 (c, UINT64_MAX);
      return;
    }
  hash_u64 (c, strlen (s));
  sr_sha256_update (c, s, strlen (s));
}

static void
hash_strv (sr_sha256_ctx *c, char *const *v)
{
  if (v == NULL)
    {
      hash_u64 (c, UINT64_MAX);
      return;
    }
  hash_u64 (c, strv_len (v));
  for (; *v != NULL; v++)
    hash_str (c, *v);
}

static void
hash_opt_u32 (sr_sha256_ctx *c, const oci_opt_u32 *o)
{
  hash_u64 (c, o->set);
  hash_u64 (c, o->set ? o->value : 0);
}

static void
hash_syscall (sr_sha256_ctx *c, const oci_seccomp_syscall *sc)
{
  size_t i;

  hash_strv (c, sc->names);
  hash_str (c, sc->action);
  hash_opt_u32 (c, &sc->errno_ret);
  hash_u64 (c, sc->args_len);
  for (i = 0; i < sc->args_len; i++)
    {
      const oci_seccomp_arg *a = &sc->args[i];
      hash_u64 (c, a->index);
      hash_u64 (c, a->value);
      hash_u64 (c, a->value_two.set);
      hash_u64 (c, a->value_two.set ? a->value_two.value : 0);
      hash_str (c, a->op);
    }
}

void
sr_seccomp_cache_key (const oci_seccomp *p, uint8_t key[SR_SECCOMP_KEY_LEN])
{
  const struct scmp_version *v = seccomp_version ();
  sr_sha256_ctx c;
  size_t i;

  sr_sha256_init (&c);
  hash_str (&c, CACHE_KEY_TAG);
  hash_u64 (&c, v->major);
  hash_u64 (&c, v->minor);
  hash_u64 (&c, v->micro);
  /* The API level decides which actions libseccomp emits as such. */
  hash_u64 (&c, seccomp_api_get ());
  hash_u64 (&c, seccomp_arch_native ());

  hash_str (&c, p->default_action);
  hash_opt_u32 (&c, &p->default_errno_ret);
  hash_strv (&c, p->architectures);
  hash_u64 (&c, p->syscalls_len);
  for (i = 0; i < p->syscalls_len; i++)
    hash_syscall (&c, &p->syscalls[i]);
  sr_sha256_final (&c, key);
}

void
sr_seccomp_cache_name (const uint8_t key[SR_SECCOMP_KEY_LEN],
                       char name[2 * SR_SECCOMP_KEY_LEN + 1])
{
  static const char hex[] = "0123456789abcdef";
  int i;

  for (i = 0; i < SR_SECCOMP_KEY_LEN; i++)
    {
      name[2 * i] = hex[key[i] >> 4];
      name[2 * i + 1] = hex[key[i] & 0xf];
    }
  name[2 * SR_SECCOMP_KEY_LEN] = '\0';
}

/* ---- entries ---- */

static bool
entry_valid (const struct entry_header *h, size_t file_size)
{
  return memcmp (h->magic, ENTRY_MAGIC, sizeof h->magic) == 0
         && h->version == ENTRY_VERSION && h->count > 0
         && h->count <= BPF_MAXINSNS
         && file_size == sizeof *h + h->count * sizeof (struct sock_filter);
}

int
sr_seccomp_cache_load (const char *cache_dir,
                       const uint8_t key[SR_SECCOMP_KEY_LEN],
                       struct sock_filter **insns, size_t *len)
{
  char name[2 * SR_SECCOMP_KEY_LEN + 1];
  _cleanup_free_ char *path = NULL;
  _cleanup_free_ struct sock_filter *buf = NULL;
  _cleanup_close_ int fd = -1;
  struct entry_header h;
  struct stat st;
  uint8_t sum[32];
  size_t size;

  sr_seccomp_cache_name (key, name);
  path = xasprintf ("%s/%s", cache_dir, name);
  fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return -1;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
      || (size_t) st.st_size < sizeof h
      || sr_read_all (fd, &h, sizeof h) != (ssize_t) sizeof h
      || !entry_valid (&h, (size_t) st.st_size))
    {
      sr_debug ("seccomp: ignoring invalid cache entry \"%s\"", path);
      return -1;
    }

  size = h.count * sizeof *buf;
  buf = xmalloc (size);
  if (sr_read_all (fd, buf, size) != (ssize_t) size)
    return -1;
  sr_sha256 (buf, size, sum);
  if (memcmp (sum, h.checksum, sizeof sum) != 0)
    {
      sr_debug ("seccomp: ignoring corrupt cache entry \"%s\"", path);
      return -1;
    }
  *insns = steal_pointer (&buf);
  *len = h.count;
  return 0;
}

static int
write_entry (int fd, const struct sock_filter *insns, size_t len)
{
  struct entry_header h
      = { .version = ENTRY_VERSION, .count = (uint32_t) len };
  size_t size = len * sizeof *insns;

  memcpy (h.magic, ENTRY_MAGIC, sizeof h.magic);
  sr_sha256 (insns, size, h.checksum);
  if (sr_write_all (fd, &h, sizeof h) < 0
      || sr_write_all (fd, insns, size) < 0)
    return -1;
  return 0;
}

/* Remove the oldest entries (by mtime) until fewer than CACHE_MAX_ENTRIES
 * are left, so that one more fits.  Temporary files of writers that died
 * count too: they are entries' names with a leading dot. */
static void
cache_make_room (int dirfd)
{
  for (;;)
    {
      int fd = dup (dirfd);
      DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
      if (d == NULL)
        {
          sr_close (fd);
          return;
        }
      rewinddir (d); /* the dup shares the offset of the last pass */
      size_t n = 0;
      char oldest[NAME_MAX + 1] = "";
      struct timespec when = { 0, 0 };
      struct dirent *e;
      while ((e = readdir (d)) != NULL)
        {
          struct stat st;
          if (e->d_name[0] == '.'
              && (e->d_name[1] == '\0' || strcmp (e->d_name, "..") == 0))
            continue;
          if (fstatat (dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
          n++;
          if (oldest[0] == '\0' || st.st_mtim.tv_sec < when.tv_sec
              || (st.st_mtim.tv_sec == when.tv_sec
                  && st.st_mtim.tv_nsec < when.tv_nsec))
            {
              snprintf (oldest, sizeof oldest, "%s", e->d_name);
              when = st.st_mtim;
            }
        }
      closedir (d);
      if (n < CACHE_MAX_ENTRIES || oldest[0] == '\0'
          || unlinkat (dirfd, oldest, 0) < 0)
        return;
      sr_debug ("seccomp: cache full: removed the oldest entry \"%s\"",
                oldest);
    }
}

void
sr_seccomp_cache_store (const char *cache_dir,
                        const uint8_t key[SR_SECCOMP_KEY_LEN],
                        const struct sock_filter *insns, size_t len)
{
  char name[2 * SR_SECCOMP_KEY_LEN + 1];
  _cleanup_free_ char *path = NULL, *tmp = NULL;
  _cleanup_close_ int fd = -1;

  if (len == 0 || len > BPF_MAXINSNS)
    return;
  if (mkdir (cache_dir, 0700) < 0 && errno != EEXIST)
    {
      sr_debug ("seccomp: cache directory \"%s\": %s", cache_dir,
                strerror (errno));
      return;
    }
  _cleanup_close_ int dirfd
      = open (cache_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd >= 0)
    cache_make_room (dirfd);
  sr_seccomp_cache_name (key, name);
  path = xasprintf ("%s/%s", cache_dir, name);
  tmp = xasprintf ("%s/.%s.%d.tmp", cache_dir, name, (int) getpid ());
  fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 || write_entry (fd, insns, len) < 0 || rename (tmp, path) < 0)
    {
      sr_debug ("seccomp: cannot write cache entry \"%s\": %s", path,
                strerror (errno));
      if (fd >= 0)
        unlink (tmp);
    }
}
