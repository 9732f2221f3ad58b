/* The stats readers on fixture directories shaped like cgroupfs
 * (src/core/cgroup/stats*.c), and the runc-shaped JSON of events. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/core/cgroup/stats.h"
#include "sandrun/events.h"
#include "sandrun/stats.h"
#include "sandrun/util.h"
#include "unit.h"

static char dir[] = "/tmp/sr-stats-XXXXXX";
static int dfd = -1;

static void
put (const char *name, const char *text)
{
  int fd = openat (dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || sr_write_all (fd, text, strlen (text)) < 0)
    abort ();
  close (fd);
}

static void
clean (void)
{
  _cleanup_closedir_ DIR *d = fdopendir (dup (dfd));
  struct dirent *de;
  while (d != NULL && (de = readdir (d)) != NULL)
    if (de->d_name[0] != '.')
      unlinkat (dfd, de->d_name, 0);
}

static void
test_v2_memory (void)
{
  sr_cgroup_stats st = { 0 };
  sr_error *err = NULL;
  put ("memory.current", "1000\n");
  put ("memory.peak", "5000\n");
  put ("memory.max", "8192\n");
  put ("memory.events", "low 1\nhigh 2\nmax 3\noom 4\noom_kill 5\noom_group_kill 0\n");
  put ("memory.swap.current", "100\n");
  put ("memory.swap.max", "max\n");
  put ("memory.swap.events", "high 0\nmax 7\nfail 0\n");
  put ("memory.stat", "anon 10\nfile 20\nworkingset_refault_anon -3\n");
  CHECK (sr_cg_v2_memory_stats (dfd, &st, &err) == 0, "v2 memory stats");
  CHECK (st.memory.usage.usage == 1000 && st.memory.usage.max == 5000
         && st.memory.usage.limit == 8192 && st.memory.usage.failcnt == 3,
         "usage: current, peak, max, max events");
  CHECK (st.memory.swap.usage == 1100 && st.memory.swap.limit == UINT64_MAX
         && st.memory.swap.failcnt == 7,
         "swap as memory+swap (v1's meaning), unlimited stays unlimited");
  CHECK (st.memory.oom == 4 && st.memory.oom_kill == 5 && st.memory.low == 1
         && st.memory.high == 2 && st.memory.max == 3,
         "memory.events counters");
  CHECK (st.memory.cache == 20, "cache is memory.stat's file");
  CHECK (st.memory.nraw == 3 && strcmp (st.memory.raw[0].key, "anon") == 0
         && st.memory.raw[2].value == 0,
         "raw: sorted, a negative counter clamped to 0");
  sr_cgroup_stats_clear (&st);
  clean ();

  /* No swap accounting: no swap figures at all. */
  put ("memory.current", "1000\n");
  put ("memory.max", "max\n");
  CHECK (sr_cg_v2_memory_stats (dfd, &st, &err) == 0
             && st.memory.swap.usage == 0 && st.memory.swap.limit == 0
             && st.memory.usage.limit == UINT64_MAX,
         "without memory.swap.*: swap left 0, max is UINT64_MAX");
  sr_cgroup_stats_clear (&st);
  clean ();
  sr_error_free (err);
}

static void
test_v2_cpu_io_pids (void)
{
  sr_cgroup_stats st = { 0 };
  sr_error *err = NULL;
  put ("cpu.stat", "usage_usec 7\nuser_usec 3\nsystem_usec 4\nnr_periods 10\n"
                   "nr_throttled 2\nthrottled_usec 9\n");
  put ("io.stat", "7:0 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n"
                  "254:16 rbytes=1 wbytes=2 rios=3 wios=4\n");
  put ("pids.current", "3\n");
  put ("pids.max", "max\n");
  put ("pids.events", "max 5\n");
  put ("cpuset.cpus.effective", "0-2,5\n");
  put ("cpuset.mems.effective", "0\n");
  CHECK (sr_cg_v2_cpu_stats (dfd, &st, &err) == 0 && st.cpu.total == 7000
             && st.cpu.user == 3000 && st.cpu.kernel == 4000
             && st.cpu.periods == 10 && st.cpu.throttled_periods == 2
             && st.cpu.throttled_time == 9000,
         "cpu.stat in nanoseconds");
  CHECK (sr_cg_v2_io_stats (dfd, &st, &err) == 0
             && st.blkio[SR_BLKIO_SERVICE_BYTES].n == 4
             && st.blkio[SR_BLKIO_SERVICED].n == 4,
         "io.stat: bytes and ios, read and write, per device");
  CHECK (st.blkio[SR_BLKIO_SERVICE_BYTES].v[0].major == 7
             && strcmp (st.blkio[SR_BLKIO_SERVICE_BYTES].v[0].op, "Read") == 0
             && st.blkio[SR_BLKIO_SERVICE_BYTES].v[0].value == 4096,
         "io.stat: runc's op names");
  CHECK (sr_cg_pids_stats (dfd, &st, &err) == 0 && st.pids.current == 3
             && st.pids.limit == 0 && st.pids.max_events == 5,
         "pids: max is limit 0 (runc), refused forks from pids.events");
  struct sr_stats sum;
  sr_stats_from_cgroup (&st, &sum);
  CHECK (sum.cpu_usec == 7 && sum.cpu_user_usec == 3 && sum.cpu_system_usec == 4
             && sum.pids_current == 3 && sum.pids_limit == 0
             && sum.pids_max_events == 5,
         "sr_stats: CPU in microseconds, pids as read");
  CHECK (sr_cg_v2_cpuset_stats (dfd, &st, &err) == 0 && st.cpuset.cpus.n == 4
             && st.cpuset.cpus.v[3] == 5 && st.cpuset.mems.n == 1,
         "cpuset lists expanded");
  sr_cgroup_stats_clear (&st);
  clean ();
  put ("cpuset.cpus.effective", "3-1\n");
  CHECK (sr_cg_v2_cpuset_stats (dfd, &st, &err) < 0, "a backwards range is refused");
  sr_error_free (err);
  err = NULL;
  sr_cgroup_stats_clear (&st);
  clean ();
}

static void
test_v1 (void)
{
  sr_cgroup_stats st = { 0 };
  sr_error *err = NULL;
  put ("cpuacct.usage", "123456\n");
  put ("cpuacct.usage_percpu", "100000 23456 \n");
  put ("cpuacct.usage_all", "cpu user system\n0 60000 40000\n1 20000 3456\n");
  put ("cpuacct.stat", "user 3\nsystem 2\n");
  CHECK (sr_cg_v1_cpuacct_stats (dfd, &st, &err) == 0 && st.cpu.total == 123456
             && st.cpu.percpu.n == 2 && st.cpu.percpu_user.n == 2
             && st.cpu.percpu_kernel.v[1] == 3456,
         "cpuacct: total, per CPU, per CPU user/system");
  long hz = sysconf (_SC_CLK_TCK);
  CHECK (st.cpu.user == 3 * (1000000000ull / (unsigned long long) hz),
         "cpuacct.stat ticks to nanoseconds");
  put ("memory.usage_in_bytes", "4096\n");
  put ("memory.max_usage_in_bytes", "8192\n");
  put ("memory.failcnt", "2\n");
  put ("memory.limit_in_bytes", "9223372036854771712\n");
  put ("memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 6\n");
  put ("memory.stat", "cache 11\nrss 22\n");
  CHECK (sr_cg_v1_memory_stats (dfd, &st, &err) == 0
             && st.memory.usage.usage == 4096 && st.memory.usage.failcnt == 2
             && st.memory.usage.limit == 9223372036854771712ull
             && st.memory.oom_kill == 6 && st.memory.cache == 11,
         "v1 memory: counters, oom_kill from memory.oom_control");
  struct sr_stats sum;
  sr_stats_from_cgroup (&st, &sum);
  CHECK (sum.memory_bytes == 4096 && sum.memory_peak_bytes == 8192
             && sum.memory_limit_bytes == 0 && sum.memory_max_events == 2
             && sum.memory_oom_kills == 6,
         "sr_stats: v1's unlimited is limit 0, failcnt counts max events");
  st.memory.usage.limit = 268435456;
  sr_stats_from_cgroup (&st, &sum);
  CHECK (sum.memory_limit_bytes == 268435456, "sr_stats: a real limit as is");
  put ("blkio.throttle.io_service_bytes_recursive",
       "7:0 Read 512\n7:0 Write 0\n7:0 Total 512\nTotal 512\n");
  put ("blkio.throttle.io_serviced_recursive", "7:0 Read 1\n");
  CHECK (sr_cg_v1_blkio_stats (dfd, &st, &err) == 0
             && st.blkio[SR_BLKIO_SERVICE_BYTES].n == 3
             && st.blkio[SR_BLKIO_SERVICED].n == 1,
         "blkio: the throttle policy's figures, the last Total line left out");
  put ("hugetlb.2MB.limit_in_bytes", "4194304\n");
  put ("hugetlb.2MB.usage_in_bytes", "2097152\n");
  put ("hugetlb.2MB.failcnt", "1\n");
  put ("hugetlb.1GB.limit_in_bytes", "0\n");
  CHECK (sr_cg_v1_hugetlb_stats (dfd, &st, &err) == 0 && st.nhugetlb == 2
             && strcmp (st.hugetlb[0].page_size, "1GB") == 0
             && st.hugetlb[1].usage == 2097152 && st.hugetlb[1].failcnt == 1,
         "hugetlb: every page size, sorted");

  /* runc's omitempty rules in the JSON. */
  _cleanup_free_ char *json = sr_events_stats_json ("c1", &st);
  CHECK (str_has_prefix (json, "{\"type\":\"stats\",\"id\":\"c1\",\"data\":{\"cpu\":{\"usage\":{\"total\":123456,"),
         "stats JSON starts as runc's: %.80s", json);
  CHECK (strstr (json, "\"throttling\":{}") != NULL, "empty throttling is {}");
  CHECK (strstr (json, "\"kernelTCP\":{\"limit\":0,\"failcnt\":0}") != NULL,
         "a memory entry keeps limit and failcnt, drops zero usage/max");
  CHECK (strstr (json, "{\"major\":7,\"op\":\"Write\"}") != NULL,
         "blkio entry: minor 0 and value 0 left out (runc)");
  CHECK (strstr (json, "\"1GB\":{\"failcnt\":0}") != NULL, "hugetlb entry");
  CHECK (strstr (json, "\"intel_rdt\":{},\"network_interfaces\":null}}\n") != NULL,
         "ends with intel_rdt and network_interfaces, one line");
  sr_cgroup_stats_clear (&st);
  sr_error_free (err);
  clean ();
}

int
main (void)
{
  if (mkdtemp (dir) == NULL || (dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    return 2;
  test_v2_memory ();
  test_v2_cpu_io_pids ();
  test_v1 ();
  close (dfd);
  rmdir (dir);
  return unit_finish ();
}
