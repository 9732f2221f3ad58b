#!/usr/bin/python3
"""sandrun's benchmark: sandrun against crun, runc, bubblewrap and engines,
measured in one run, interleaved so that machine noise hits every variant
alike.  It prints medians and ratios; it asserts nothing.

Run it through tests/bench/run.sh, which installs the peers, builds the floor
program and sets up the cgroup layout; see tests/bench/README.md.
"""

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time



class Sample:
    __slots__ = ("wall_ms", "cpu_ms", "rss_kib", "status")

    def __init__(self, wall_ms, cpu_ms, rss_kib, status):
        self.wall_ms, self.cpu_ms = wall_ms, cpu_ms
        self.rss_kib, self.status = rss_kib, status


RUSAGE = None  # the rusage helper (tests/bench/rusage.c), set by main()


def measure(argv, env=None):
    """Run argv (through the rusage helper) and wait for it: wall time, CPU
    (user+sys of the process and every descendant it reaped, so a runtime's
    container init is counted), peak RSS of the largest process in that tree."""
    r, w = os.pipe()
    pid = os.posix_spawn(RUSAGE, [RUSAGE] + argv, env if env is not None else os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, w, 3)])
    os.close(w)
    with os.fdopen(r) as f:
        out = f.read().split()
    os.waitpid(pid, 0)
    wall_ns, cpu_us, rss, status = (int(x) for x in out)
    return Sample(wall_ns / 1e6, cpu_us / 1e3, rss, status)


def quiet(argv, check=True, **kw):
    """Run argv for its effect.  stderr goes to a file, not a pipe: a detached
    container inherits it and would hold a pipe open for its whole life."""
    with tempfile.TemporaryFile(mode="w+") as err:
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=err, **kw)
        err.seek(0)
        r.stderr = err.read()
    if check and r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(argv), r.stderr.strip()[:300]))
    return r


class Runtime:
    """An OCI runtime binary with its own --root."""

    def __init__(self, name, path, work):
        self.name, self.path = name, path
        self.root = os.path.join(work, "root-" + name)
        os.makedirs(self.root, exist_ok=True)
        self.seq = 0

    def cmd(self, *args):
        return [self.path, "--root", self.root] + list(args)

    def new_id(self, tag):
        self.seq += 1
        return "%s-%s-%d" % (self.name, tag, self.seq)

    def ids(self):
        r = subprocess.run(self.cmd("list", "-q"), capture_output=True, text=True)
        return r.stdout.split()

    def delete_all(self):
        for cid in self.ids():
            quiet(self.cmd("delete", "-f", cid), check=False)


class Bench:
    def __init__(self, args):
        self.args = args
        self.work = tempfile.mkdtemp(prefix="sandrun-bench.")
        self.results = []  # (section, metric, {variant: [samples]})
        self.notes = []

    # -- set-up -----------------------------------------------------------
    def bundle(self, name, args, seccomp=None):
        path = os.path.join(self.work, name)
        quiet([self.args.mkbundle, "--no-terminal", path, "--"] + args)
        with open(os.path.join(path, "config.json")) as f:
            cfg = json.load(f)
        # crun 1.8 and runc 1.1 predate spec 1.3.0: an older version suits all.
        cfg["ociVersion"] = "1.0.2"
        if seccomp:
            cfg["linux"]["seccomp"] = seccomp
        with open(os.path.join(path, "config.json"), "w") as f:
            json.dump(cfg, f)
        return path

    def runtimes(self):
        out = []
        for name, path in (("sandrun", self.args.sandrun), ("crun", shutil.which("crun")),
                           ("runc", shutil.which("runc"))):
            if not path:
                self.notes.append("%s: not installed, left out" % name)
                continue
            rt = Runtime(name, path, self.work)
            r = subprocess.run(rt.cmd("run", "-b", self.true_bundle, rt.new_id("probe")),
                               capture_output=True, text=True)
            if r.returncode != 0:
                self.notes.append("%s: cannot run here: %s" % (name, r.stderr.strip()[:200]))
                continue
            out.append(rt)
        return out

    # -- measuring ------------------------------------------------------------
    def interleave(self, section, metric, variants, n=None, warmup=3):
        """variants: {label: callable returning a Sample}; each is run n times,
        in a shuffled order per round."""
        n = n or self.args.n
        samples = {k: [] for k in variants}
        labels = list(variants)
        for _ in range(warmup):
            for k in labels:
                variants[k]()
        for _ in range(n):
            random.shuffle(labels)
            for k in labels:
                s = variants[k]()
                if s is not None:
                    samples[k].append(s)
        self.results.append((section, metric, samples))
        self.progress(section, metric, samples)
        return samples

    def progress(self, section, metric, samples):
        parts = []
        for k, v in samples.items():
            if v:
                parts.append("%s %.2f ms" % (k, statistics.median(s.wall_ms for s in v)))
        print("  %s / %s: %s" % (section, metric, ", ".join(parts)), file=sys.stderr)

    # -- the table --------------------------------------------------------------
    def report(self, rts):
        print("# sandrun benchmark")
        print()
        print("machine: %s, %d cores, kernel %s, cgroup %s; %d rounds, medians"
              % (platform.machine(), os.cpu_count(), platform.release(),
                 self.args.cgroup_layout, self.args.n))
        for rt in rts:
            r = subprocess.run([rt.path, "--version"], capture_output=True, text=True)
            print("- %s: %s" % (rt.name, r.stdout.splitlines()[0] if r.stdout else "?"))
        print()
        print("| section | metric | variant | wall ms | CPU ms | peak RSS KiB | vs base |")
        print("|---|---|---|---:|---:|---:|---|")
        for section, metric, samples in self.results:
            base = next(iter(samples))
            base_v = samples[base]
            for k, v in samples.items():
                if not v:
                    continue
                wall = statistics.median(s.wall_ms for s in v)
                cpu = statistics.median(s.cpu_ms for s in v)
                rss = max(s.rss_kib for s in v)
                ratio = ""
                if k != base and base_v:
                    bw = statistics.median(s.wall_ms for s in base_v)
                    bc = statistics.median(s.cpu_ms for s in base_v)
                    ratio = "wall %.2fx, CPU %.2fx %s" % (wall / bw if bw else 0,
                                                          cpu / bc if bc else 0, base)
                fails = sum(1 for s in v if s.status != 0)
                flag = " (%d failed)" % fails if fails else ""
                print("| %s | %s | %s%s | %.2f | %.2f | %d | %s |"
                      % (section, metric, k, flag, wall, cpu, rss, ratio))
        if self.notes:
            print()
            for n in self.notes:
                print("- " + n)

    def extra(self, line):
        self.notes.append(line)


# ---------------------------------------------------------------------------
def bench_lifecycle(b, rts):
    def run_true(rt, bundle):
        return lambda: measure(rt.cmd("run", "-b", bundle, rt.new_id("t")))

    def floor(cg):
        argv = [b.args.floor] + cg + [os.path.join(b.true_bundle, "rootfs"), "true"]
        return lambda: measure(argv)

    variants = {}
    for rt in sorted(rts, key=lambda r: r.name != "crun"):
        variants[rt.name] = run_true(rt, b.true_bundle)
    variants["floor"] = floor([])
    if b.args.floor_cgroups:
        variants["floor+cgroups"] = floor(sum((["-c", d] for d in b.args.floor_cgroups), []))
    b.interleave("run /bin/true", "run", variants)

    big = {k: run_true(rt, b.seccomp_bundle) for rt in rts
           for k in [rt.name]}
    b.interleave("run /bin/true", "run, %d-syscall seccomp profile" % b.seccomp_count,
                 dict(sorted(big.items(), key=lambda kv: kv[0] != "crun")))

    # create, start, delete separately: each step of one container in turn.
    pending = {rt.name: [] for rt in rts}

    def step_fn(rt, step):
        def f():
            if step == "create":
                cid = rt.new_id("c")
                s = measure(rt.cmd("create", "-b", b.sleep_bundle, cid))
                pending[rt.name].append(cid)
                return s
            cid = pending[rt.name].pop(0)
            if step == "start":
                s = measure(rt.cmd("start", cid))
                pending[rt.name].append(cid)
                return s
            quiet(rt.cmd("kill", cid, "KILL"), check=False)
            wait_stopped(rt, cid)
            return measure(rt.cmd("delete", cid))
        return f

    for step in ("create", "start", "delete"):
        order = sorted(rts, key=lambda r: r.name != "crun")
        b.interleave("lifecycle", step, {rt.name: step_fn(rt, step) for rt in order},
                     warmup=0)
    for rt in rts:
        rt.delete_all()


def wait_stopped(rt, cid, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r = subprocess.run(rt.cmd("state", cid), capture_output=True, text=True)
        if r.returncode != 0 or '"stopped"' in r.stdout:
            return
        time.sleep(0.002)


def bench_exec(b, rts):
    order = sorted(rts, key=lambda r: r.name != "crun")
    ids = {}
    for rt in order:
        cid = rt.new_id("exec")
        quiet(rt.cmd("run", "-d", "-b", b.sleep_bundle, cid))
        ids[rt.name] = cid
    b.interleave("exec", "exec /bin/true",
                 {rt.name: (lambda rt=rt: measure(rt.cmd("exec", ids[rt.name], "true")))
                  for rt in order})
    for rt in rts:
        rt.delete_all()


def bench_scaling(b, rts):
    """state, list and a run cycle with K other containers under the root."""
    order = sorted(rts, key=lambda r: r.name != "crun")
    have = 0
    for k in b.args.others:
        for rt in order:
            for _ in range(k - have):
                quiet(rt.cmd("run", "-d", "-b", b.sleep_bundle, rt.new_id("other")))
        have = k
        probe = {}
        for rt in order:
            probe[rt.name] = rt.ids()[0] if k else None
        if k:
            b.interleave("with %d others" % k, "state",
                         {rt.name: (lambda rt=rt: measure(rt.cmd("state", probe[rt.name])))
                          for rt in order}, n=min(b.args.n, 30))
        b.interleave("with %d others" % k, "list",
                     {rt.name: (lambda rt=rt: measure(rt.cmd("list")))
                      for rt in order}, n=min(b.args.n, 30))
        b.interleave("with %d others" % k, "run /bin/true",
                     {rt.name: (lambda rt=rt: measure(rt.cmd("run", "-b", b.true_bundle,
                                                               rt.new_id("t"))))
                      for rt in order}, n=min(b.args.n, 30))
    for rt in rts:
        rt.delete_all()


def bench_throughput(b, rts):
    """Containers per second with W workers each running `run /bin/true`."""
    for w in b.args.workers:
        line = []
        for rt in sorted(rts, key=lambda r: r.name != "crun"):
            per = max(4, b.args.n // 2)
            t0 = time.perf_counter()

            def worker(i, rt=rt):
                for j in range(per):
                    measure(rt.cmd("run", "-b", b.true_bundle, "%s-tp%d-%d" % (rt.name, i, j)))

            threads = [threading.Thread(target=worker, args=(i,)) for i in range(w)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            rate = w * per / (time.perf_counter() - t0)
            line.append("%s %.0f/s" % (rt.name, rate))
            b.throughput.setdefault(w, {})[rt.name] = rate
        print("  throughput %d workers: %s" % (w, ", ".join(line)), file=sys.stderr)


def bench_startup(b, rts):
    b.interleave("start-up", "--version",
                 {rt.name: (lambda rt=rt: measure([rt.path, "--version"]))
                  for rt in sorted(rts, key=lambda r: r.name != "crun")})
    for rt in rts:
        stripped = os.path.join(b.work, rt.name + ".stripped")
        shutil.copy(rt.path, stripped)
        quiet(["strip", stripped], check=False)
        b.sizes[rt.name] = (os.path.getsize(rt.path), os.path.getsize(stripped))


def sandbox_available(b):
    r = subprocess.run([b.args.sandrun, "sandbox", "--help"], capture_output=True)
    return r.returncode == 0


def bench_sandbox(b, rts):
    if not sandbox_available(b):
        b.extra("sandbox: this sandrun has no `sandbox` command, left out")
        return
    sr = b.args.sandrun
    srt = next(rt for rt in rts if rt.name == "sandrun")
    variants = {
        "sandrun run": lambda: measure(srt.cmd("run", "-b", b.true_bundle, srt.new_id("t"))),
        "sandrun sandbox": lambda: measure([sr, "sandbox", "--", "/bin/true"]),
    }
    bwrap = shutil.which("bwrap")
    if bwrap:
        # bubblewrap with the same isolation the sandbox has (no cgroups, no receipt)
        argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session",
                "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
                "--symlink", "usr/sbin", "/sbin", "--symlink", "usr/lib", "/lib",
                "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev",
                "--tmpfs", "/tmp", "--dir", "/work", "--chdir", "/work",
                "--cap-drop", "ALL", "--clearenv", "--", "/bin/true"]
        if probe(b, "bwrap", argv):
            variants["bwrap"] = lambda argv=argv: measure(argv)
    else:
        b.extra("bwrap: not installed, left out")
    for label, argv in engine_commands(b):
        if probe(b, label, argv):
            variants[label] = lambda argv=argv: measure(argv)
    b.interleave("sandbox", "/bin/true", variants)

    py = "/usr/bin/python3"
    b.interleave("sandbox", "python3 -c 'print(1)'", {
        "host": lambda: measure([py, "-c", "print(1)"]),
        "sandrun sandbox": lambda: measure([sr, "sandbox", "--", py, "-c", "print(1)"]),
    })
    bench_session(b, sr)
    if b.args.egress:
        b.interleave("sandbox", "/bin/true, egress gateway on but unused", {
            "sandrun sandbox": lambda: measure([sr, "sandbox", "--", "/bin/true"]),
            "with --allow-host": lambda: measure([sr, "sandbox", "--allow-host",
                                                  "example.invalid", "--", "/bin/true"]),
        })


def probe(b, label, argv):
    """Run argv once: a peer that fails here is left out with its error,
    rather than timed failing."""
    r = quiet(argv, check=False)
    if r.returncode != 0:
        b.extra("%s: fails here, left out: %s" % (label, r.stderr.strip()[-300:]))
    return r.returncode == 0


def bench_session(b, sr):
    name = "bench-%d" % os.getpid()
    r = quiet([sr, "sandbox", "start", "--name", name], check=False)
    if r.returncode != 0:
        b.extra("session: `sandbox start` failed or is missing (%s), left out"
                % r.stderr.strip()[:120])
        return
    # The execution is started by a worker the session's supervisor forks:
    # its CPU time is the supervisor's children's, not the caller's.
    b.extra("session exec: CPU counts the calling sandrun only; the process is "
            "started by a worker of the session's supervisor (docs/sessions.md)")
    try:
        b.interleave("sandbox", "session exec /bin/true", {
            "one-shot sandbox": lambda: measure([sr, "sandbox", "--", "/bin/true"]),
            "warm session exec": lambda: measure([sr, "sandbox", "exec", name, "--", "/bin/true"]),
        })
    finally:
        quiet([sr, "sandbox", "stop", name], check=False)


def engine_commands(b):
    """`podman run --rm` and `docker run --rm` with crun, when they can run
    here on a locally imported image (nothing is pulled)."""
    out = []
    podman = shutil.which("podman")
    if podman and b.args.engines:
        store = os.path.join(b.work, "podman")
        base = [podman, "--root", store + "/root", "--runroot", store + "/run",
                "--cgroup-manager", "cgroupfs", "--events-backend", "none"]
        tar = os.path.join(b.work, "rootfs.tar")
        quiet(["tar", "-C", os.path.join(b.true_bundle, "rootfs"), "-cf", tar, "."])
        r = quiet(base + ["import", tar, "localhost/bench:latest"], check=False)
        if r.returncode == 0:
            # limits a root without CAP_SYS_RESOURCE may set (podman's
            # defaults are higher than such a machine's hard limits)
            out.append(("podman run --rm (crun)", base + ["run", "--rm", "--network", "none",
                                                          "--ulimit", "host",
                                                          "--runtime", "crun",
                                                          "localhost/bench:latest", "true"]))
        else:
            b.extra("podman: import failed, left out: %s" % r.stderr.strip()[:120])
    docker_host = os.environ.get("DOCKER_HOST")
    if docker_host and shutil.which("docker"):
        out.append(("docker run --rm", ["docker", "run", "--rm", "--network", "none",
                                        "bench:latest", "true"]))
    else:
        b.extra("docker: no daemon given (DOCKER_HOST), left out")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sandrun", required=True)
    p.add_argument("--mkbundle", required=True)
    p.add_argument("--floor", required=True)
    p.add_argument("--rusage", required=True)
    p.add_argument("--floor-cgroups", nargs="*", default=[])
    p.add_argument("--cgroup-layout", default="?")
    p.add_argument("-n", type=int, default=50, help="rounds per measure")
    p.add_argument("--others", type=int, nargs="*", default=[0, 100, 1000])
    p.add_argument("--workers", type=int, nargs="*", default=[1, 2, 4, 8])
    p.add_argument("--only", nargs="*", default=None,
                   help="sections: lifecycle exec scaling throughput startup sandbox")
    p.add_argument("--no-engines", dest="engines", action="store_false")
    p.add_argument("--no-egress", dest="egress", action="store_false")
    args = p.parse_args()

    global RUSAGE
    RUSAGE = args.rusage
    b = Bench(args)
    b.throughput, b.sizes = {}, {}
    b.true_bundle = b.bundle("true", ["true"])
    b.sleep_bundle = b.bundle("sleep", ["sleep", "100000"])
    syscalls = seccomp_names()
    b.seccomp_count = len(syscalls)
    b.seccomp_bundle = b.bundle("seccomp", ["true"], seccomp={
        "defaultAction": "SCMP_ACT_ERRNO",
        "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
        "syscalls": [{"names": syscalls, "action": "SCMP_ACT_ALLOW"}]})
    rts = b.runtimes()
    if not any(rt.name == "sandrun" for rt in rts):
        sys.exit("bench: sandrun cannot run here: " + "; ".join(b.notes))
    sections = args.only or ["lifecycle", "exec", "scaling", "throughput", "startup", "sandbox"]
    try:
        for s in sections:
            print("%s ..." % s, file=sys.stderr)
            globals()["bench_" + s](b, rts)
    finally:
        for rt in rts:
            rt.delete_all()
    b.report(rts)
    if b.throughput:
        print()
        print("| workers | " + " | ".join(rt.name + " runs/s" for rt in rts) + " | sandrun/crun |")
        print("|---:|" + "---:|" * (len(rts) + 1))
        for w, rates in sorted(b.throughput.items()):
            ratio = rates.get("sandrun", 0) / rates["crun"] if rates.get("crun") else 0
            print("| %d | %s | %.2fx |" % (w, " | ".join("%.0f" % rates.get(rt.name, 0)
                                                         for rt in rts), ratio))
    if b.sizes:
        print()
        print("| binary | size KiB | stripped KiB |")
        print("|---|---:|---:|")
        for name, (size, stripped) in b.sizes.items():
            print("| %s | %d | %d |" % (name, size // 1024, stripped // 1024))
    shutil.rmtree(b.work, ignore_errors=True)


def seccomp_names():
    """Every syscall name libseccomp knows for x86_64 (a large allow-list
    profile, as engines' default profiles are)."""
    import ctypes
    lib = ctypes.CDLL("libseccomp.so.2")
    lib.seccomp_syscall_resolve_num_arch.restype = ctypes.c_void_p
    libc = ctypes.CDLL(None)
    names = []
    for nr in range(0, 512):
        p = lib.seccomp_syscall_resolve_num_arch(0xC000003E, nr)  # SCMP_ARCH_X86_64
        if p:
            names.append(ctypes.string_at(p).decode())
            libc.free(ctypes.c_void_p(p))
    return names


if __name__ == "__main__":
    main()
