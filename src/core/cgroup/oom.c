/* OOM notification.  The fd only says "look again"; what is reported
 * comes from the kernel's counters, so that coalesced wake-ups lose
 * nothing:
 *   - every OOM kill (memory.events oom_kill on v2, memory.oom_control
 *     oom_kill on v1) is one event;
 *   - an OOM that killed nothing counted (v2's "oom" without "oom_kill";
 *     on v1 a notification: the victim may be a task already exiting,
 *     which the kernel does not count, or the OOM killer is disabled) is
 *     one event per episode: the kernel notifies every failed allocation,
 *     and those that follow within EPISODE_MS are the same OOM.
 *
 * v2: inotify on memory.events (modified at every event).
 * v1: an eventfd registered for memory.oom_control in cgroup.event_control;
 * the kernel signals it when the cgroup goes OOM and when it is removed. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "stats.h"
#include "sandrun/util.h"

/* Notifications this close to the previous one are the same episode. */
#define EPISODE_MS 1000

struct sr_cgroup_oom
{
  int fd;       /* inotify or eventfd */
  int dirfd;    /* the memory cgroup (our own dup) */
  bool v2;
  uint64_t kills;   /* oom_kill at the last look */
  uint64_t ooms;    /* v2's "oom" at the last look */
  uint64_t pending; /* v1: notifications since the counters were last read */
  int64_t last_ms; /* the last notification of the episode */
  bool uncounted;   /* that event was an OOM without a counted kill */
};

/* The counters: kills, and on v2 OOM situations ("oom"). */
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
  *ooms = w->v2 ? sr_cg_kv_get (kv, n, "oom") : 0;
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
  *out = w;
  return 0;
}

int
sr_cgroup_oom_fd (const sr_cgroup_oom *w)
{
  return w->fd;
}

/* Consume what woke us up.  v1 counts its eventfd's notifications; v2's
 * inotify events are only drained (memory.events itself is what counts). */
static void
drain (struct sr_cgroup_oom *w)
{
  if (!w->v2)
    {
      uint64_t v = 0;
      if (read (w->fd, &v, sizeof v) == (ssize_t) sizeof v)
        w->pending += v;
      return;
    }
  char buf[4096];
  while (read (w->fd, buf, sizeof buf) > 0)
    ;
}

/* Up to 10 ms for a notification, consumed if one comes. */
static void
wait_drain (struct sr_cgroup_oom *w)
{
  struct pollfd p = { .fd = w->fd, .events = POLLIN };
  if (poll (&p, 1, 10) > 0)
    drain (w);
}

/* How long v1's removal notification may take to arrive (the kernel
 * sends it from a workqueue after the rmdir). */
#define REMOVAL_SETTLE_MS 300

/* The cgroup went away before its counters could be read: `run` removes
 * it as soon as the init is reaped, which on a busy host can beat us to
 * the kill's notification.  On v1 what was notified meanwhile still tells:
 * the eventfd fires for an OOM and once more for the removal (so wait for
 * that one).  On v2 memory.events also changes for "max" and "high", which
 * a container under its limit hits without any OOM: no guess there. */
static bool
ooms_before_removal (struct sr_cgroup_oom *w)
{
  if (w->v2)
    return false;
  for (unsigned waited = 0; w->pending < 2 && waited < REMOVAL_SETTLE_MS;
       waited += 10)
    wait_drain (w);
  return w->pending > 1;
}

/* The events to report for `kills` new kills and, when `oom`, an OOM seen
 * without them (see the top of the file). */
static uint64_t
episode_events (struct sr_cgroup_oom *w, uint64_t kills, bool oom)
{
  int64_t now = sr_monotonic_ms ();
  bool same = w->last_ms != 0 && now - w->last_ms < EPISODE_MS;
  uint64_t n = kills;
  if (kills > 0 && same && w->uncounted)
    n--; /* the kill of the OOM already reported */
  if (kills > 0)
    w->uncounted = false;
  else if (oom && !same)
    {
      n = 1;
      w->uncounted = true;
    }
  /* An episode lasts while notifications keep coming: the allocations of
   * the other tasks go on failing until the victim has freed its memory. */
  if (kills > 0 || oom)
    w->last_ms = now;
  return n;
}

/* The kernel notifies an OOM before it picks and counts the victim: give
 * the kill that normally follows a moment to be counted, so that the OOM
 * and its kill are one event rather than an OOM now and a kill at the next
 * wake-up, which may be another OOM's. */
#define KILL_SETTLE_MS 100

static int
wait_for_kill (struct sr_cgroup_oom *w, uint64_t *kills, uint64_t *ooms, bool *gone,
               sr_error **err)
{
  for (unsigned waited = 0; *kills <= w->kills && waited < KILL_SETTLE_MS; waited += 10)
    {
      wait_drain (w);
      if (read_counters (w, kills, ooms, gone, err) < 0)
        return -1;
      if (*gone)
        return 0;
    }
  return 0;
}

int
sr_cgroup_oom_count (sr_cgroup_oom *w, uint64_t *n, bool *gone, sr_error **err)
{
  uint64_t kills = 0, ooms = 0;
  drain (w);
  *n = 0;
  if (read_counters (w, &kills, &ooms, gone, err) < 0)
    return -1;
  bool oom = !*gone && (w->v2 ? ooms > w->ooms : w->pending > 0);
  if (oom && kills <= w->kills && wait_for_kill (w, &kills, &ooms, gone, err) < 0)
    return -1;
  if (*gone)
    {
      *n = episode_events (w, 0, oom || ooms_before_removal (w));
      w->pending = 0;
      return 0;
    }
  uint64_t new_kills = kills > w->kills ? kills - w->kills : 0;
  w->kills = kills;
  w->ooms = ooms;
  w->pending = 0;
  *n = episode_events (w, new_kills, oom);
  return 0;
}
