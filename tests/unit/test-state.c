/* The state store (ids, reservation, records, listing, removal) and the
 * parent <-> init sync protocol. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include "oci-spec/oci-spec.h"
#include "core/state.h"
#include "core/sync.h"
#include "sandrun/util.h"
#include "unit.h"

static void
test_ids (void)
{
  static const char *const good[] = { "web", "a", "A-1_b.c+d", "0abc" };
  static const char *const bad[] = { "", ".", "..", "a/b", "../x", "-x", "a\nb", ".hidden", "a b" };
  sr_error *err = NULL;

  for (size_t i = 0; i < ARRAY_SIZE (good); i++)
    CHECK (sr_validate_id (good[i], &err) == 0, "id \"%s\" is valid", good[i]);
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    {
      CHECK (sr_validate_id (bad[i], &err) < 0, "id #%zu is refused", i);
      sr_error_freep (&err);
    }
  char *long_id = xmalloc (SR_MAX_ID_LEN + 2);
  memset (long_id, 'a', SR_MAX_ID_LEN + 1);
  long_id[SR_MAX_ID_LEN + 1] = '\0';
  CHECK (sr_validate_id (long_id, &err) < 0, "an id longer than %d bytes is refused", SR_MAX_ID_LEN);
  sr_error_freep (&err);
  free (long_id);
}

static void
test_store (void)
{
  char dir[] = "/tmp/sandrun-test-state.XXXXXX";
  sr_store store = { .root_fd = -1 };
  sr_error *err = NULL;

  if (mkdtemp (dir) == NULL)
    {
      CHECK (0, "mkdtemp");
      return;
    }
  _cleanup_free_ char *root = xasprintf ("%s/a/root", dir);
  CHECK (sr_store_open (root, true, &store, &err) == 0, "the root is created, parent included");

  int fd = sr_store_reserve (&store, "c1", &err);
  CHECK (fd >= 0, "reserve c1");
  CHECK (sr_store_reserve (&store, "c1", &err) < 0 && strstr (err->msg, "already exists") != NULL,
         "a second reserve of c1 fails: already exists");
  sr_error_freep (&err);

  /* The reservation holds the lock: another open file cannot take it. */
  _cleanup_close_ int other = openat (store.root_fd, "c1", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  CHECK (flock (other, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK, "the reserved directory is locked");

  sr_record rec = { .id = xstrdup ("c1"), .pid = 1234, .start_time = 987654321ULL,
                    .bundle = xstrdup ("/b"), .rootfs = xstrdup ("/b/rootfs"),
                    .created = sr_now_rfc3339 (), .owner = xstrdup ("root"),
                    .cgroup_path = xstrdup ("/c1"), .created_done = true };
  rec.annotations.len = 1;
  rec.annotations.v = xcalloc (1, sizeof (oci_kv));
  rec.annotations.v[0].key = xstrdup ("k");
  rec.annotations.v[0].value = xstrdup ("v\"quoted\"");
  CHECK (sr_record_write (fd, &rec, &err) == 0, "write a record");

  sr_record back;
  CHECK (sr_record_read (fd, &back, &err) == 0, "read it back");
  CHECK (back.pid == 1234 && back.start_time == 987654321ULL && back.created_done
             && str_eq (back.bundle, "/b") && str_eq (back.cgroup_path, "/c1")
             && str_eq (back.created, rec.created) && back.annotations.len == 1
             && str_eq (back.annotations.v[0].value, "v\"quoted\""),
         "every field survives the round trip");
  sr_record_clear (&back);
  sr_record_clear (&rec);
  sr_close (fd);

  CHECK (sr_store_lock (&store, "nope", true, &err) < 0 && strstr (err->msg, "does not exist") != NULL,
         "locking an unknown container: does not exist");
  sr_error_freep (&err);

  fd = sr_store_reserve (&store, "c0", &err);
  sr_close (fd);
  char **ids = NULL;
  CHECK (sr_store_list (&store, &ids, &err) == 0 && strv_len (ids) == 2
             && strcmp (ids[0], "c0") == 0 && strcmp (ids[1], "c1") == 0,
         "list is sorted");
  strv_free (ids);

  CHECK (sr_store_remove (&store, "c1", &err) == 0 && sr_store_remove (&store, "c0", &err) == 0,
         "remove both");
  CHECK (faccessat (store.root_fd, "c1", F_OK, 0) < 0, "the directory is gone");
  CHECK (sr_store_remove (&store, "c1", &err) == 0, "removing twice is no error");
  sr_store_close (&store);

  _cleanup_free_ char *cmd = xasprintf ("rm -rf '%s'", dir);
  CHECK (system (cmd) == 0, "cleanup");
}

static void
test_sync (void)
{
  int sv[2];
  sr_error *err = NULL;
  struct sr_sync_msg msg;

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    {
      CHECK (0, "socketpair");
      return;
    }
  CHECK (sr_sync_send (sv[0], SR_SYNC_STEP, SR_STEP_READY, NULL, &err) == 0, "send a step");
  CHECK (sr_sync_expect_step (sv[1], SR_STEP_READY, &err) == 0, "it arrives as that step");

  sr_sync_send (sv[0], SR_SYNC_STEP, SR_STEP_GO, NULL, &err);
  CHECK (sr_sync_expect_step (sv[1], SR_STEP_READY, &err) < 0 && err->errnum == EPROTO,
         "another step than expected is a protocol error");
  sr_error_freep (&err);

  sr_sync_send (sv[0], SR_SYNC_ERROR, EACCES, "mount \"/x\": Permission denied", &err);
  CHECK (sr_sync_expect_step (sv[1], SR_STEP_READY, &err) < 0 && err->errnum == EACCES
             && strcmp (err->msg, "mount \"/x\": Permission denied") == 0,
         "an ERROR message becomes the error, text and errno as sent");
  sr_error_freep (&err);

  int devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  CHECK (sr_sync_send_fd (sv[0], SR_FD_SECCOMP_LISTENER, devnull, &err) == 0, "send an fd");
  CHECK (sr_sync_recv (sv[1], &msg, &err) == 0 && msg.hdr.type == SR_SYNC_FD
             && msg.hdr.value == SR_FD_SECCOMP_LISTENER && msg.fd >= 0 && msg.fd != devnull,
         "it arrives with its kind");
  sr_close (msg.fd);
  sr_close (devnull);

  /* A log line in between is emitted and skipped. */
  sr_sync_send (sv[0], SR_SYNC_LOG, SR_LOG_DEBUG, "a debug line", &err);
  sr_sync_send (sv[0], SR_SYNC_DATA, 0, "{\"state\":1}", &err);
  CHECK (sr_sync_recv (sv[1], &msg, &err) == 0 && msg.hdr.type == SR_SYNC_DATA
             && strcmp (msg.text, "{\"state\":1}") == 0,
         "LOG messages are consumed on the way to the next message");

  /* A malformed message: wrong version. */
  struct sr_sync_hdr hdr = { 99, SR_SYNC_STEP, 1, 0 };
  CHECK (send (sv[0], &hdr, sizeof hdr, 0) == sizeof hdr, "send a bad header");
  CHECK (sr_sync_recv (sv[1], &msg, &err) < 0 && err->errnum == EPROTO, "a wrong version is refused");
  sr_error_freep (&err);

  sr_close (sv[0]);
  CHECK (sr_sync_recv (sv[1], &msg, &err) < 0 && err->errnum == EPIPE,
         "EOF: the other side exited, the waiting side fails");
  sr_error_freep (&err);
  sr_close (sv[1]);
}

int
main (void)
{
  test_ids ();
  test_store ();
  test_sync ();
  return unit_finish ();
}
