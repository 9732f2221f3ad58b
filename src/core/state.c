#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "oci-spec/oci-spec.h"
#include "core/state.h"
#include "sandrun/util.h"

#define RECORD_FILE "state.json"
#define RECORD_MAX_SIZE (4u * 1024 * 1024)

static int
store_open (const char *root, bool create, sr_store *store, sr_error **err)
{
  if (create && mkdir (root, 0700) < 0 && errno != EEXIST)
    {
      /* Engines pass roots whose parents may not exist yet (/run/x/y). */
      _cleanup_free_ char *parent = xstrdup (root);
      char *slash = strrchr (parent, '/');
      if (errno != ENOENT || slash == NULL || slash == parent)
        return sr_fail (err, errno, "create state directory \"%s\"", root);
      *slash = '\0';
      if (mkdir (parent, 0711) < 0 && errno != EEXIST)
        return sr_fail (err, errno, "create state directory \"%s\"", parent);
      if (mkdir (root, 0700) < 0 && errno != EEXIST)
        return sr_fail (err, errno, "create state directory \"%s\"", root);
    }
  store->root_fd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (store->root_fd < 0)
    return sr_fail (err, errno, "open state directory \"%s\"", root);
  return 0;
}

int
sr_store_open (const char *root, bool create, sr_store *store, sr_error **err)
{
  store->root = xstrdup (root);
  store->root_fd = -1;
  if (store_open (root, create, store, err) < 0)
    {
      sr_store_close (store); /* the caller has nothing to release */
      return -1;
    }
  return 0;
}

void
sr_store_close (sr_store *store)
{
  sr_close (store->root_fd);
  store->root_fd = -1;
  free (store->root);
  store->root = NULL;
}

int
sr_validate_id (const char *id, sr_error **err)
{
  size_t n = strlen (id);

  if (n == 0)
    return sr_fail (err, EINVAL, "container id is empty");
  if (n > SR_MAX_ID_LEN)
    return sr_fail (err, EINVAL, "container id is longer than %d bytes",
                    SR_MAX_ID_LEN);
  if (strcmp (id, ".") == 0 || strcmp (id, "..") == 0)
    return sr_fail (err, EINVAL, "invalid container id \"%s\"", id);
  for (const char *p = id; *p; p++)
    {
      char c = *p;
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9')
                || (p != id && (c == '_' || c == '-' || c == '.' || c == '+'));
      if (!ok)
        return sr_fail (err, EINVAL,
                        "invalid container id (allowed: letters, digits and "
                        "_ - . + after the first character)");
    }
  return 0;
}

static int
lock_dir (int dirfd, bool exclusive, const char *id, sr_error **err)
{
  int r;
  do
    r = flock (dirfd, exclusive ? LOCK_EX : LOCK_SH);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return sr_fail (err, errno, "lock container \"%s\"", id);
  return 0;
}

int
sr_store_reserve (sr_store *store, const char *id, sr_error **err)
{
  if (mkdirat (store->root_fd, id, 0700) < 0)
    {
      if (errno == EEXIST)
        return sr_fail (err, 0, "container \"%s\" already exists", id);
      return sr_fail (err, errno, "create container directory \"%s/%s\"",
                      store->root, id);
    }
  _cleanup_close_ int fd
      = openat (store->root_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return sr_fail (err, errno, "open container directory \"%s\"", id);
  if (lock_dir (fd, true, id, err) < 0)
    return -1;
  return steal_fd (&fd);
}

int
sr_fail_no_container (sr_error **err, const char *id)
{
  sr_fail (err, 0, "container \"%s\" does not exist", id);
  if (err != NULL && *err != NULL)
    (*err)->errnum = ENOENT;
  return -1;
}

int
sr_store_lock (sr_store *store, const char *id, bool exclusive, sr_error **err)
{
  _cleanup_close_ int fd
      = openat (store->root_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      if (errno == ENOENT)
        return sr_fail_no_container (err, id);
      return sr_fail (err, errno, "open container directory \"%s\"", id);
    }
  /* Readers take no lock: records are replaced atomically, and a reader
   * must not wait for a create that is running hooks. */
  if (exclusive && lock_dir (fd, true, id, err) < 0)
    return -1;
  /* A delete that won the lock first removed the directory under us. */
  struct stat st;
  if (fstat (fd, &st) == 0 && st.st_nlink == 0)
    return sr_fail_no_container (err, id);
  return steal_fd (&fd);
}

static int
remove_tree_at (int dirfd, sr_error **err)
{
  _cleanup_close_ int fd = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return sr_fail (err, errno, "open");
  DIR *d = fdopendir (fd);
  if (d == NULL)
    return sr_fail (err, errno, "opendir");
  fd = -1;
  _cleanup_closedir_ DIR *dir = d;
  struct dirent *de;
  while ((de = readdir (dir)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (unlinkat (dirfd, de->d_name, 0) == 0 || errno == ENOENT)
        continue;
      if (errno != EISDIR)
        return sr_fail (err, errno, "remove \"%s\"", de->d_name);
      _cleanup_close_ int sub
          = openat (dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0 || remove_tree_at (sub, err) < 0)
        return sub < 0 ? sr_fail (err, errno, "open \"%s\"", de->d_name) : -1;
      if (unlinkat (dirfd, de->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        return sr_fail (err, errno, "remove \"%s\"", de->d_name);
    }
  return 0;
}

int
sr_store_remove (sr_store *store, const char *id, sr_error **err)
{
  _cleanup_close_ int fd
      = openat (store->root_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? 0 : sr_fail (err, errno, "open container directory \"%s\"", id);
  if (remove_tree_at (fd, err) < 0)
    return sr_wrap (err, "remove container directory \"%s/%s\"", store->root, id);
  if (unlinkat (store->root_fd, id, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return sr_fail (err, errno, "remove container directory \"%s/%s\"", store->root, id);
  return 0;
}

int
sr_write_file_atomic (int dirfd, const char *name, const void *data, size_t len,
                      mode_t mode, sr_error **err)
{
  _cleanup_free_ char *tmp = xasprintf (".%s.%d.tmp", name, (int) getpid ());
  _cleanup_close_ int fd
      = openat (dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0)
    return sr_fail (err, errno, "create \"%s\"", tmp);
  if (sr_write_all (fd, data, len) < 0)
    {
      int saved = errno;
      unlinkat (dirfd, tmp, 0);
      return sr_fail (err, saved, "write \"%s\"", tmp);
    }
  if (renameat (dirfd, tmp, dirfd, name) < 0)
    {
      int saved = errno;
      unlinkat (dirfd, tmp, 0);
      return sr_fail (err, saved, "rename \"%s\" to \"%s\"", tmp, name);
    }
  return 0;
}

/* ---- the record ---------------------------------------------------------- */

static void
gen_str (yajl_gen g, const char *key, const char *value)
{
  if (value == NULL)
    return;
  yajl_gen_string (g, (const unsigned char *) key, strlen (key));
  yajl_gen_string (g, (const unsigned char *) value, strlen (value));
}

static void
gen_int (yajl_gen g, const char *key, long long value)
{
  yajl_gen_string (g, (const unsigned char *) key, strlen (key));
  yajl_gen_integer (g, value);
}

static void
gen_bool (yajl_gen g, const char *key, bool value)
{
  yajl_gen_string (g, (const unsigned char *) key, strlen (key));
  yajl_gen_bool (g, value);
}

int
sr_record_write (int dirfd, const sr_record *rec, sr_error **err)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  const unsigned char *buf;
  size_t len;

  yajl_gen_map_open (g);
  gen_str (g, "id", rec->id);
  gen_int (g, "pid", rec->pid);
  /* start times fit in 63 bits: they are clock ticks since boot */
  gen_int (g, "start_time", (long long) rec->start_time);
  gen_str (g, "bundle", rec->bundle);
  gen_str (g, "rootfs", rec->rootfs);
  gen_str (g, "created", rec->created);
  gen_str (g, "owner", rec->owner);
  gen_str (g, "cgroup_path", rec->cgroup_path);
  gen_bool (g, "created_done", rec->created_done);
  gen_bool (g, "systemd_cgroup", rec->systemd_cgroup);
  gen_bool (g, "cgroup_shared", rec->cgroup_shared);
  yajl_gen_string (g, (const unsigned char *) "annotations", 11);
  yajl_gen_map_open (g);
  for (size_t i = 0; i < rec->annotations.len; i++)
    gen_str (g, rec->annotations.v[i].key, rec->annotations.v[i].value);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  yajl_gen_get_buf (g, &buf, &len);

  int r = sr_write_file_atomic (dirfd, RECORD_FILE, buf, len, 0600, err);
  yajl_gen_free (g);
  return r;
}

static char *
tree_str (yajl_val root, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, path, yajl_t_string);
  return v != NULL ? xstrdup (YAJL_GET_STRING (v)) : NULL;
}

static long long
tree_int (yajl_val root, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, path, yajl_t_number);
  return v != NULL && YAJL_IS_INTEGER (v) ? YAJL_GET_INTEGER (v) : 0;
}

static bool
tree_bool (yajl_val root, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, path, yajl_t_any);
  return v != NULL && YAJL_IS_TRUE (v);
}

static void
tree_map (yajl_val root, const char *key, oci_map *out)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, path, yajl_t_object);
  if (v == NULL)
    return;
  size_t n = YAJL_GET_OBJECT (v)->len;
  out->v = xcalloc (n, sizeof *out->v);
  for (size_t i = 0; i < n; i++)
    {
      yajl_val val = YAJL_GET_OBJECT (v)->values[i];
      if (!YAJL_IS_STRING (val))
        continue;
      out->v[out->len].key = xstrdup (YAJL_GET_OBJECT (v)->keys[i]);
      out->v[out->len].value = xstrdup (YAJL_GET_STRING (val));
      out->len++;
    }
}

int
sr_record_read (int dirfd, sr_record *rec, sr_error **err)
{
  _cleanup_free_ char *data = NULL;
  char errbuf[256];

  memset (rec, 0, sizeof *rec);
  if (sr_read_file_at (dirfd, RECORD_FILE, RECORD_MAX_SIZE, &data, NULL, err) < 0)
    return -1;
  yajl_val root = yajl_tree_parse (data, errbuf, sizeof errbuf);
  if (root == NULL || !YAJL_IS_OBJECT (root))
    {
      yajl_tree_free (root);
      return sr_fail (err, EINVAL, "corrupt state file");
    }
  rec->id = tree_str (root, "id");
  rec->pid = (pid_t) tree_int (root, "pid");
  rec->start_time = (unsigned long long) tree_int (root, "start_time");
  rec->bundle = tree_str (root, "bundle");
  rec->rootfs = tree_str (root, "rootfs");
  rec->created = tree_str (root, "created");
  rec->owner = tree_str (root, "owner");
  rec->cgroup_path = tree_str (root, "cgroup_path");
  rec->created_done = tree_bool (root, "created_done");
  rec->systemd_cgroup = tree_bool (root, "systemd_cgroup");
  rec->cgroup_shared = tree_bool (root, "cgroup_shared");
  tree_map (root, "annotations", &rec->annotations);
  yajl_tree_free (root);
  return 0;
}

void
sr_record_clear (sr_record *rec)
{
  free (rec->id);
  free (rec->bundle);
  free (rec->rootfs);
  free (rec->created);
  free (rec->owner);
  free (rec->cgroup_path);
  oci_map_free (&rec->annotations);
  memset (rec, 0, sizeof *rec);
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

int
sr_store_list (sr_store *store, char ***ids, sr_error **err)
{
  _cleanup_close_ int fd = openat (store->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return sr_fail (err, errno, "open state directory \"%s\"", store->root);
  DIR *d = fdopendir (fd);
  if (d == NULL)
    return sr_fail (err, errno, "read state directory \"%s\"", store->root);
  fd = -1;
  _cleanup_closedir_ DIR *dir = d;
  char **v = xcalloc (1, sizeof *v);
  struct dirent *de;
  while ((de = readdir (dir)) != NULL)
    if (de->d_name[0] != '.' && de->d_type == DT_DIR)
      strv_append (&v, de->d_name);
  qsort (v, strv_len (v), sizeof *v, cmp_str);
  *ids = v;
  return 0;
}

int
sr_proc_stat (pid_t pid, char *state, unsigned long long *start_time)
{
  char path[64], buf[1024];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = sr_read_all (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  /* comm may contain spaces and parentheses: fields start after the last ')' */
  char *p = strrchr (buf, ')');
  if (p == NULL || p[1] == '\0' || p[2] == '\0')
    return -1;
  *state = p[2];
  p++;
  /* p points at " state ppid ..." : start time is field 22, the 20th after ')' */
  for (int field = 3; field < 22 && p != NULL; field++)
    p = strchr (p + 1, ' ');
  *start_time = p != NULL ? strtoull (p + 1, NULL, 10) : 0;
  return 0;
}

unsigned long long
sr_proc_start_time (pid_t pid)
{
  char state;
  unsigned long long start = 0;
  return sr_proc_stat (pid, &state, &start) == 0 ? start : 0;
}
