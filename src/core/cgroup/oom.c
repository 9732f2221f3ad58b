/* OOM notification.  The fd only says "look again"; what counts is the
 * kernel's counter of OOM kills (memory.events oom_kill on v2,
 * memory.oom_control oom_kill on v1), so that nothing is lost or counted
 * twice however the wake-ups coalesce, and a last look after the container
 * died still finds a kill that raced with its exit.
 *
 * v2: inotify on memory.events (modified at every event).
 * v1: an eventfd registered for memory.oom_control in cgroup.event_control;
 * the kernel signals it when the cgroup goes OOM and when it is removed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "stats.h"
#include "sandrun/util.h"

struct sr_cgroup_oom
{
  int fd;       /* inotify or eventfd */
  int dirfd;    /* the memory cgroup (our own dup) */
  bool v2;
  uint64_t kills; /* the counter at the last look */
  uint64_t ooms;  /* v2 "oom", v1 eventfd notifications without a kill */
};

/* The counters: kills, and OOM situations ("oom" on v2; on v1 under_oom,
 * which stays 1 while the OOM killer is disabled and tasks wait). */
static int
read_counters (const struct sr_cgroup_oom *w, uint64_t *kills, uint64_t *ooms,
               bool *gone, sr_error **err)
{
  sr_cg_kv *kv = NULL;
  size_t n = 0;
  sr_error *e = NULL;
  *gone = false;
  if (sr_cg_read_kv_opt (w->dirfd, w->v2 ? "memory.events" : "memory.oom_control",
                         &kv, &n, &e) < 0)
    {
      /* A removed cgroup's files fail with ENODEV (or vanish). */
      if (e->errnum == ENODEV || e->errnum == ENOENT)
        {
          sr_error_free (e);
          *gone = true;
          return 0;
        }
      *err = e;
      return -1;
    }
  *kills = sr_cg_kv_get (kv, n, "oom_kill");
  *ooms = sr_cg_kv_get (kv, n, w->v2 ? "oom" : "under_oom");
  sr_cg_kv_free (kv, n);
  return 0;
}

static int
watch_v2 (struct sr_cgroup_oom *w, sr_error **err)
{
  w->fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  if (w->fd < 0)
    return sr_fail (err, errno, "cgroup: inotify_init1");
  /* The magic link names the directory we hold, not a path that a
   * container with a writable cgroupfs could have reshaped. */
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d/memory.events", w->dirfd);
  if (inotify_add_watch (w->fd, path, IN_MODIFY) < 0)
    return sr_fail (err, errno, "cgroup: watch memory.events");
  return 0;
}

static int
watch_v1 (struct sr_cgroup_oom *w, sr_error **err)
{
  _cleanup_close_ int control = openat (w->dirfd, "memory.oom_control",
                                        O_RDONLY | O_CLOEXEC);
  if (control < 0)
    return sr_fail (err, errno, "cgroup: open \"memory.oom_control\"");
  w->fd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (w->fd < 0)
    return sr_fail (err, errno, "cgroup: eventfd");
  return sr_cg_writef (w->dirfd, "cgroup.event_control", err, "%d %d", w->fd,
                       control);
}

void
sr_cgroup_oom_free (sr_cgroup_oom *w)
{
  if (w == NULL)
    return;
  sr_close (w->fd);
  sr_close (w->dirfd);
  free (w);
}

int
sr_cgroup_oom_watch (const sr_cgroup *cg, sr_cgroup_oom **out, sr_error **err)
{
  const struct sr_cg_hier *h = sr_cg_find (cg, SR_CG_MEMORY);
  if (h == NULL)
    return sr_fail (err, ENOTSUP, "cgroup: no memory controller: OOM events "
                    "are not available");
  if (h->fd < 0)
    return sr_fail (err, ENOENT, "cgroup \"%s%s\"", h->mnt, h->path);
  struct sr_cgroup_oom *w = xcalloc (1, sizeof *w);
  w->fd = -1;
  w->v2 = h->v2;
  w->dirfd = fcntl (h->fd, F_DUPFD_CLOEXEC, 3);
  bool gone;
  if (w->dirfd < 0)
    {
      sr_fail (err, errno, "cgroup: dup");
      sr_cgroup_oom_free (w);
      return -1;
    }
  if ((w->v2 ? watch_v2 (w, err) : watch_v1 (w, err)) < 0
      || read_counters (w, &w->kills, &w->ooms, &gone, err) < 0)
    {
      sr_cgroup_oom_free (w);
      return sr_wrap (err, "cgroup %s \"%s\"", sr_cg_hier_name (h), h->path);
    }
  if (!w->v2)
    w->ooms = 0; /* under_oom is a state, not a count */
  *out = w;
  return 0;
}

int
sr_cgroup_oom_fd (const sr_cgroup_oom *w)
{
  return w->fd;
}

/* What woke us up: v1 returns the number of eventfd notifications. */
static uint64_t
drain (const struct sr_cgroup_oom *w)
{
  if (!w->v2)
    {
      uint64_t v = 0;
      return read (w->fd, &v, sizeof v) == (ssize_t) sizeof v ? v : 0;
    }
  char buf[4096];
  while (read (w->fd, buf, sizeof buf) > 0)
    ;
  return 0;
}

int
sr_cgroup_oom_count (sr_cgroup_oom *w, uint64_t *n, bool *gone, sr_error **err)
{
  uint64_t kills = 0, ooms = 0;
  uint64_t notified = drain (w);
  *n = 0;
  if (read_counters (w, &kills, &ooms, gone, err) < 0)
    return -1;
  if (*gone)
    return 0;
  uint64_t new_kills = kills > w->kills ? kills - w->kills : 0;
  w->kills = kills;
  /* An OOM that killed nothing (v1 with the OOM killer disabled, v2 with
   * nothing killable) is still an OOM event, as runc reports it. */
  uint64_t new_ooms = 0;
  if (w->v2)
    {
      new_ooms = ooms > w->ooms ? ooms - w->ooms : 0;
      w->ooms = ooms;
    }
  else if (notified > 0 && new_kills == 0 && ooms > 0)
    new_ooms = 1;
  *n = new_kills > new_ooms ? new_kills : new_ooms;
  return 0;
}
