/* `events`: stats and OOM kills of a container as runc prints them (its
 * types/events.go: same keys, same omitempty rules, one compact object per
 * line).  The watch ends when the container's init exits, or on SIGINT or
 * SIGTERM. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/cgroup/cgroup.h"
#include "core/cgroup/cgroup_stats.h"
#include "sandrun/events.h"
#include "sandrun/jsongen.h"
#include "core/lifecycle.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

/* ---- JSON ----------------------------------------------------------------- */

static void
gen_u64 (yajl_gen g, uint64_t v)
{
  char buf[24];
  int n = snprintf (buf, sizeof buf, "%llu", (unsigned long long) v);
  yajl_gen_number (g, buf, (size_t) n);
}

static void
gen_kv_u64 (yajl_gen g, const char *key, uint64_t v)
{
  sr_json_gen_str (g, key);
  gen_u64 (g, v);
}

/* Go's `json:",omitempty"` on a number. */
static void
gen_kv_u64_nz (yajl_gen g, const char *key, uint64_t v)
{
  if (v != 0)
    gen_kv_u64 (g, key, v);
}

static void
gen_kv_str (yajl_gen g, const char *key, const char *v)
{
  sr_json_gen_str (g, key);
  yajl_gen_string (g, (const unsigned char *) v, strlen (v));
}

static void
gen_list_nz (yajl_gen g, const char *key, const sr_cg_u64_list *l)
{
  if (l->n == 0)
    return;
  sr_json_gen_str (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < l->n; i++)
    gen_u64 (g, l->v[i]);
  yajl_gen_array_close (g);
}

static void
gen_cpu (yajl_gen g, const sr_cgroup_stats *st)
{
  sr_json_gen_str (g, "cpu");
  yajl_gen_map_open (g);
  sr_json_gen_str (g, "usage");
  yajl_gen_map_open (g);
  gen_kv_u64_nz (g, "total", st->cpu.total);
  gen_list_nz (g, "percpu", &st->cpu.percpu);
  gen_list_nz (g, "percpu_kernel", &st->cpu.percpu_kernel);
  gen_list_nz (g, "percpu_user", &st->cpu.percpu_user);
  gen_kv_u64 (g, "kernel", st->cpu.kernel);
  gen_kv_u64 (g, "user", st->cpu.user);
  yajl_gen_map_close (g);
  sr_json_gen_str (g, "throttling");
  yajl_gen_map_open (g);
  gen_kv_u64_nz (g, "periods", st->cpu.periods);
  gen_kv_u64_nz (g, "throttledPeriods", st->cpu.throttled_periods);
  gen_kv_u64_nz (g, "throttledTime", st->cpu.throttled_time);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
}

static void
gen_cpuset (yajl_gen g, const sr_cgroup_stats *st)
{
  sr_json_gen_str (g, "cpuset");
  yajl_gen_map_open (g);
  gen_list_nz (g, "cpus", &st->cpuset.cpus);
  gen_kv_u64 (g, "cpu_exclusive", st->cpuset.cpu_exclusive);
  gen_list_nz (g, "mems", &st->cpuset.mems);
  gen_kv_u64 (g, "mem_hardwall", st->cpuset.mem_hardwall);
  gen_kv_u64 (g, "mem_exclusive", st->cpuset.mem_exclusive);
  gen_kv_u64 (g, "memory_migrate", st->cpuset.memory_migrate);
  gen_kv_u64 (g, "memory_spread_page", st->cpuset.memory_spread_page);
  gen_kv_u64 (g, "memory_spread_slab", st->cpuset.memory_spread_slab);
  gen_kv_u64 (g, "memory_pressure", st->cpuset.memory_pressure);
  gen_kv_u64 (g, "sched_load_balance", st->cpuset.sched_load_balance);
  sr_json_gen_str (g, "sched_relax_domain_level");
  yajl_gen_integer (g, st->cpuset.sched_relax_domain_level);
  yajl_gen_map_close (g);
}

static void
gen_mem_entry (yajl_gen g, const char *key, const sr_cg_mem_entry *e)
{
  sr_json_gen_str (g, key);
  yajl_gen_map_open (g);
  gen_kv_u64 (g, "limit", e->limit);
  gen_kv_u64_nz (g, "usage", e->usage);
  gen_kv_u64_nz (g, "max", e->max);
  gen_kv_u64 (g, "failcnt", e->failcnt);
  yajl_gen_map_close (g);
}

static void
gen_memory (yajl_gen g, const sr_cgroup_stats *st)
{
  sr_json_gen_str (g, "memory");
  yajl_gen_map_open (g);
  gen_kv_u64_nz (g, "cache", st->memory.cache);
  gen_mem_entry (g, "usage", &st->memory.usage);
  gen_mem_entry (g, "swap", &st->memory.swap);
  gen_mem_entry (g, "kernel", &st->memory.kernel);
  gen_mem_entry (g, "kernelTCP", &st->memory.kernel_tcp);
  if (st->memory.nraw > 0)
    {
      sr_json_gen_str (g, "raw");
      yajl_gen_map_open (g);
      for (size_t i = 0; i < st->memory.nraw; i++)
        gen_kv_u64 (g, st->memory.raw[i].key, st->memory.raw[i].value);
      yajl_gen_map_close (g);
    }
  sr_json_gen_str (g, "event_count");
  yajl_gen_map_open (g);
  gen_kv_u64_nz (g, "low", st->memory.low);
  gen_kv_u64_nz (g, "high", st->memory.high);
  gen_kv_u64_nz (g, "max", st->memory.max);
  gen_kv_u64_nz (g, "oom", st->memory.oom);
  gen_kv_u64_nz (g, "oom_kill", st->memory.oom_kill);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
}

static void
gen_pids (yajl_gen g, const sr_cgroup_stats *st)
{
  sr_json_gen_str (g, "pids");
  yajl_gen_map_open (g);
  gen_kv_u64_nz (g, "current", st->pids.current);
  gen_kv_u64_nz (g, "limit", st->pids.limit);
  yajl_gen_map_close (g);
}

static void
gen_blkio (yajl_gen g, const sr_cgroup_stats *st)
{
  /* runc's names; "ioQueueRecursive" is its spelling. */
  static const char *const names[SR_BLKIO__COUNT] = {
    [SR_BLKIO_SERVICE_BYTES] = "ioServiceBytesRecursive",
    [SR_BLKIO_SERVICED] = "ioServicedRecursive",
    [SR_BLKIO_QUEUED] = "ioQueueRecursive",
    [SR_BLKIO_SERVICE_TIME] = "ioServiceTimeRecursive",
    [SR_BLKIO_WAIT_TIME] = "ioWaitTimeRecursive",
    [SR_BLKIO_MERGED] = "ioMergedRecursive",
    [SR_BLKIO_TIME] = "ioTimeRecursive",
    [SR_BLKIO_SECTORS] = "sectorsRecursive",
  };
  sr_json_gen_str (g, "blkio");
  yajl_gen_map_open (g);
  for (size_t i = 0; i < SR_BLKIO__COUNT; i++)
    {
      const sr_cg_blkio_list *l = &st->blkio[i];
      if (l->n == 0)
        continue;
      sr_json_gen_str (g, names[i]);
      yajl_gen_array_open (g);
      for (size_t k = 0; k < l->n; k++)
        {
          yajl_gen_map_open (g);
          gen_kv_u64_nz (g, "major", l->v[k].major);
          gen_kv_u64_nz (g, "minor", l->v[k].minor);
          if (l->v[k].op[0] != '\0')
            gen_kv_str (g, "op", l->v[k].op);
          gen_kv_u64_nz (g, "value", l->v[k].value);
          yajl_gen_map_close (g);
        }
      yajl_gen_array_close (g);
    }
  yajl_gen_map_close (g);
}

static void
gen_hugetlb (yajl_gen g, const sr_cgroup_stats *st)
{
  sr_json_gen_str (g, "hugetlb");
  yajl_gen_map_open (g);
  for (size_t i = 0; i < st->nhugetlb; i++)
    {
      const sr_cg_hugetlb_stat *h = &st->hugetlb[i];
      sr_json_gen_str (g, h->page_size);
      yajl_gen_map_open (g);
      gen_kv_u64_nz (g, "usage", h->usage);
      gen_kv_u64_nz (g, "max", h->max);
      gen_kv_u64 (g, "failcnt", h->failcnt);
      yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
}

static yajl_gen
gen_event_open (const char *type, const char *id)
{
  yajl_gen g = sr_json_gen_new (false);
  yajl_gen_map_open (g);
  gen_kv_str (g, "type", type);
  gen_kv_str (g, "id", id);
  return g;
}

char *
sr_events_stats_json (const char *id, const sr_cgroup_stats *st)
{
  yajl_gen g = gen_event_open ("stats", id);
  sr_json_gen_str (g, "data");
  yajl_gen_map_open (g);
  gen_cpu (g, st);
  gen_cpuset (g, st);
  gen_memory (g, st);
  gen_pids (g, st);
  gen_blkio (g, st);
  gen_hugetlb (g, st);
  sr_json_gen_str (g, "intel_rdt");
  yajl_gen_map_open (g);
  yajl_gen_map_close (g);
  sr_json_gen_str (g, "network_interfaces");
  yajl_gen_null (g);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  return sr_json_gen_take (g, true);
}

static char *
oom_json (const char *id)
{
  yajl_gen g = gen_event_open ("oom", id);
  yajl_gen_map_close (g);
  return sr_json_gen_take (g, true);
}

/* ---- the watch -------------------------------------------------------------- */

struct watch
{
  const char *id;
  FILE *out;
  const sr_cgroup *cg;
  sr_cgroup_oom *oom; /* NULL without a memory controller */
  int pidfd;          /* the init; -1 where pidfd_open is missing */
  int sigfd;
  pid_t pid;
  unsigned long long start_time;
};

static int
emit (FILE *out, char *line, sr_error **err)
{
  int r = fputs (line, out) < 0 || fflush (out) != 0 ? -1 : 0;
  free (line);
  if (r < 0)
    return sr_fail (err, errno, "events: write");
  return 0;
}

static int
emit_stats (const struct watch *w, sr_error **err)
{
  sr_cgroup_stats st;
  if (sr_cgroup_read_stats (w->cg, &st, err) < 0)
    return -1;
  int r = emit (w->out, sr_events_stats_json (w->id, &st), err);
  sr_cgroup_stats_clear (&st);
  return r;
}

static int
emit_ooms (const struct watch *w, sr_error **err)
{
  uint64_t n = 0;
  bool gone = false;
  if (w->oom == NULL)
    return 0;
  if (sr_cgroup_oom_count (w->oom, &n, &gone, err) < 0)
    return -1;
  for (uint64_t i = 0; i < n; i++)
    if (emit (w->out, oom_json (w->id), err) < 0)
      return -1;
  return 0;
}

static bool
init_gone (const struct watch *w, const struct pollfd *pidpoll)
{
  if (w->pidfd >= 0)
    return (pidpoll->revents & (POLLIN | POLLHUP)) != 0;
  return !sr_init_alive (w->pid, w->start_time);
}

/* Without a pidfd the init is checked at least this often. */
#define ALIVE_CHECK_MS 200

static int
watch_loop (struct watch *w, unsigned long long interval_ms, sr_error **err)
{
  int64_t next = sr_monotonic_ms () + (int64_t) interval_ms;
  for (;;)
    {
      struct pollfd fds[3] = {
        { .fd = w->sigfd, .events = POLLIN },
        { .fd = w->pidfd, .events = POLLIN },
        { .fd = w->oom ? sr_cgroup_oom_fd (w->oom) : -1, .events = POLLIN },
      };
      int64_t now = sr_monotonic_ms ();
      unsigned long long wait = next > now ? next - now : 0;
      if (w->pidfd < 0 && wait > ALIVE_CHECK_MS)
        wait = ALIVE_CHECK_MS;
      int r = poll (fds, 3, (int) (wait > INT32_MAX ? INT32_MAX : wait));
      if (r < 0 && errno != EINTR)
        return sr_fail (err, errno, "events: poll");
      if (r > 0 && fds[0].revents)
        {
          /* Consume it: it must not fire when the mask is restored. */
          struct signalfd_siginfo si;
          if (read (w->sigfd, &si, sizeof si) < 0)
            sr_debug ("events: read signalfd: %s", strerror (errno));
          return 0;
        }
      if (fds[2].revents && emit_ooms (w, err) < 0)
        return -1;
      if (init_gone (w, &fds[1]))
        return emit_ooms (w, err); /* a kill that raced with the exit */
      if (sr_monotonic_ms () >= next)
        {
          sr_error *e = NULL;
          if (emit_stats (w, &e) < 0)
            {
              /* As runc: a failed sample is logged, the watch goes on. */
              sr_error_log ("%s", e->msg);
              sr_error_free (e);
            }
          next += interval_ms;
          if (next <= sr_monotonic_ms ())
            next = sr_monotonic_ms () + (int64_t) interval_ms;
        }
    }
}

static int
open_pidfd (pid_t pid, unsigned long long start_time)
{
  int fd = (int) syscall (SYS_pidfd_open, pid, 0);
  /* The pidfd pins the process: check it is still the init we started. */
  if (fd >= 0 && !sr_init_alive (pid, start_time))
    {
      sr_close (fd);
      errno = ESRCH;
      return -1;
    }
  return fd;
}

/* SIGINT and SIGTERM end the watch, even when inherited as ignored (a
 * shell's background job ignores SIGINT). */
static int
block_signals (sigset_t *old, sr_error **err)
{
  struct sigaction dfl = { .sa_handler = SIG_DFL };
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGTERM);
  sigaction (SIGINT, &dfl, NULL);
  sigaction (SIGTERM, &dfl, NULL);
  if (sigprocmask (SIG_BLOCK, &set, old) < 0)
    return sr_fail (err, errno, "events: sigprocmask");
  int fd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd < 0)
    return sr_fail (err, errno, "events: signalfd");
  return fd;
}

static int
watch (struct watch *w, const struct sr_events_opts *opts, sr_error **err)
{
  sr_error *e = NULL;
  if (sr_cgroup_oom_watch (w->cg, &w->oom, &e) < 0)
    {
      sr_warn ("events: %s", e->msg);
      sr_error_free (e);
      w->oom = NULL;
    }
  w->pidfd = open_pidfd (w->pid, w->start_time);
  if (w->pidfd < 0 && errno == ESRCH)
    return 0; /* it died in the meantime */
  sigset_t old;
  w->sigfd = block_signals (&old, err);
  int r = w->sigfd < 0 ? -1 : watch_loop (w, opts->interval_ms, err);
  sr_close (w->sigfd);
  sr_close (w->pidfd);
  sr_cgroup_oom_free (w->oom);
  sigprocmask (SIG_SETMASK, &old, NULL);
  return r;
}

int
sr_container_events (const struct sr_globals *g, const char *id,
                     const struct sr_events_opts *opts, FILE *out,
                     sr_error **err)
{
  _cleanup_container_ sr_container c = SR_CONTAINER_INIT;
  _cleanup_cgroup_ sr_cgroup *cg = NULL;

  if (opts->interval_ms == 0)
    return sr_fail (err, 0, "events: duration interval must be greater than 0");
  if (sr_container_open_cgroup (g, id, &c, &cg, err) < 0)
    return sr_wrap (err, "events");
  struct watch w = { .id = id, .out = out, .cg = cg, .pid = c.rec.pid,
                     .start_time = c.rec.start_time, .pidfd = -1, .sigfd = -1 };
  if (opts->stats_only)
    return emit_stats (&w, err) < 0 ? sr_wrap (err, "events \"%s\"", id) : 0;
  return watch (&w, opts, err) < 0 ? sr_wrap (err, "events \"%s\"", id) : 0;
}
