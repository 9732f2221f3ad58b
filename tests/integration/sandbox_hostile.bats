#!/usr/bin/env bats
# `sandrun sandbox` against hostile code (issue 12: "Hostile code"): each test
# performs the attack and shows it contained, and that nothing is left.

load sandbox_helpers

setup() {
	sb_setup
	HOST_FILES=()
}

teardown() {
	local f
	for f in "${HOST_FILES[@]}"; do
		rm -f "$f"
	done
	sb_teardown
}

# --- secrets of the host -------------------------------------------------------------

@test "sandbox hostile: the caller's environment is nowhere in the sandbox (env, every /proc/*/environ and cmdline)" {
	export SANDBOX_CALLER_SECRET=caller-secret-$RANDOM$RANDOM
	sb_py '
import os, glob
print(repr(dict(os.environ)))
for f in glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline"):
    try: print(f, open(f, "rb").read())
    except OSError as e: print(f, "unreadable", e.errno)
'
	unset SANDBOX_CALLER_SECRET
	assert_success
	[[ $(rf .stdout) != *caller-secret* ]] || fail "the caller's environment leaked: $(rf .stdout | grep caller-secret)"
	[[ $(rf .stdout) == */proc/1/environ* ]] || fail "no /proc/1 in the sandbox: $(rf .stdout)"
	# every environment visible inside holds only the sandbox's own variables
	sb_py '
import glob
for f in glob.glob("/proc/[0-9]*/environ"):
    try: env = open(f, "rb").read().split(b"\0")
    except OSError: continue
    for kv in env:
        if kv: print(kv.split(b"=")[0].decode())
' --env EXTRA=1
	assert_success
	local bad
	bad=$(rf .stdout | sort -u | grep -vx -e PATH -e HOME -e LANG -e TMPDIR -e EXTRA -e SANDRUN_TEST_MARK || true)
	[[ -z $bad ]] || fail "variables not given to the sandbox are visible in /proc/*/environ: $bad"
}

@test "sandbox hostile: /proc/1/environ and /proc/1/root are the sandbox's, not the host's init's" {
	sb_py '
import os
print(open("/proc/1/cmdline", "rb").read())
print(open("/proc/1/environ", "rb").read() if os.access("/proc/1/environ", os.R_OK) else b"unreadable")
print(sorted(os.listdir("/proc/1/root")) if os.access("/proc/1/root", os.R_OK) else "noroot")
print(len([p for p in os.listdir("/proc") if p.isdigit()]))
'
	assert_success
	local host_env
	host_env=$(tr '\0' '\n' </proc/1/environ 2>/dev/null | head -n 3 || true)
	if [[ -n $host_env ]]; then
		while IFS= read -r kv; do
			[[ $(rf .stdout) != *"$kv"* ]] || fail "the host init's environment is visible: $kv"
		done <<<"$host_env"
	fi
	[[ $(rf .stdout) != *"'root'"*"'home'"* ]] || fail "/proc/1/root is the host's /: $(rf .stdout)"
	local n
	n=$(rf .stdout | grep . | tail -n1)
	((n < 10)) || fail "the sandbox sees $n processes"
}

@test "sandbox hostile: no ~/.ssh, no /etc/shadow, no canary file of the host anywhere" {
	local canary=sbtest-canary-$RANDOM$RANDOM
	# a secret in places a careless sandbox would expose: /tmp, /var/tmp, /run
	echo "private key" >"$BATS_TEST_TMPDIR/$canary"
	echo "private key" >"/var/tmp/$canary"
	echo "private key" >"/run/$canary"
	HOST_FILES+=("/var/tmp/$canary" "/run/$canary")
	sb_run --env "CANARY=$canary" -- /bin/sh -c '
		cat /etc/shadow /etc/gshadow 2>&1; ls -la ~/.ssh /root/.ssh /home 2>&1
		find / -xdev -name "$CANARY" 2>/dev/null; find /tmp /var /run -name "$CANARY" 2>/dev/null; echo end'
	local out
	out=$(rf .stdout)
	[[ $out == *end ]] || fail "the probe did not finish: $out $(rf .stderr)"
	[[ $out != *"$canary"* ]] || fail "the host's canary is visible: $out"
	[[ $out != *root:* && $out != *'$y$'* && $out != *'$6$'* ]] || fail "/etc/shadow is readable: $out"
	grep -q 'shadow: No such file' <<<"$out" || fail "/etc/shadow exists in the sandbox: $out"
	[[ $out != *authorized_keys* && $out != *id_rsa* && $out != *id_ed25519* ]] || fail "an ssh directory is visible: $out"
}

@test "sandbox hostile: the docker, containerd and any host unix socket cannot be reached" {
	local sock=/run/sbtest-$$-$BATS_TEST_NUMBER.sock
	HOST_FILES+=("$sock")
	start_host_listeners "$sock"
	sb_py '
import os, socket
for path in os.environ["SOCKS"].split() + ["/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock",
                            "/run/podman/podman.sock", "/run/dbus/system_bus_socket", "/run/systemd/private"]:
    s = socket.socket(socket.AF_UNIX)
    try: s.connect(path); print("CONNECTED", path)
    except OSError as e: print("refused", path, e.strerror)
' --env "SOCKS=$sock $BATS_TEST_TMPDIR/host.sock"
	assert_success
	[[ $(rf .stdout) != *CONNECTED* ]] || fail "$(rf .stdout)"
	[[ ! -e $BATS_TEST_TMPDIR/accepted ]] || fail "a host listener accepted a connection"
}

@test "sandbox hostile: no network: no address outside, not the host's loopback, not the abstract socket namespace, no DNS, no raw sockets" {
	start_host_listeners
	local port host_ip
	port=$(cat "$BATS_TEST_TMPDIR/port")
	host_ip=$(ip -4 -o addr show scope global | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
	sb_py '
import errno, os, socket
port, host_ip, abstract = int(os.environ["PORT"]), os.environ["HOST_IP"], os.environ["ABSTRACT"]
def tcp(addr, p, fam=socket.AF_INET):
    s = socket.socket(fam); s.settimeout(5)
    try: s.connect((addr, p)); return "CONNECTED"
    except OSError as e: return errno.errorcode.get(e.errno, str(e))
print("test-net", tcp("192.0.2.1", 80))
if host_ip: print("host-ip", tcp(host_ip, port))
print("loopback", tcp("127.0.0.1", port))
print("v6", tcp("2001:db8::1", 80, socket.AF_INET6))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try: u.sendto(b"x" * 32, ("192.0.2.1", 53)); print("udp SENT")
except OSError as e: print("udp", errno.errorcode.get(e.errno))
a = socket.socket(socket.AF_UNIX)
try: a.connect("\0" + abstract[1:]); print("abstract CONNECTED")
except OSError as e: print("abstract", errno.errorcode.get(e.errno))
try: print("dns RESOLVED", socket.getaddrinfo("deb.debian.org", 80))
except OSError as e: print("dns", type(e).__name__)
for fam, typ, proto in ((socket.AF_PACKET, socket.SOCK_RAW, 0x0300), (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)):
    try: socket.socket(fam, typ, proto); print("raw OPENED", fam)
    except OSError as e: print("raw", errno.errorcode.get(e.errno))
' --env "PORT=$port" --env "HOST_IP=$host_ip" --env "ABSTRACT=$(abstract_name)"
	assert_success
	local out
	out=$(rf .stdout)
	[[ $out != *CONNECTED* && $out != *SENT* && $out != *RESOLVED* && $out != *OPENED* ]] || fail "$out"
	grep -qx 'test-net ENETUNREACH' <<<"$out" || fail "192.0.2.1: $out"
	grep -qx 'loopback ECONNREFUSED' <<<"$out" || fail "the host's loopback listener: $out"
	grep -qx 'abstract ECONNREFUSED' <<<"$out" || fail "the host's abstract socket: $out"
	[[ ! -e $BATS_TEST_TMPDIR/accepted ]] || fail "a host listener accepted a connection"
	assert_rf '.network | length' 0
}

# start_host_listeners [UNIX-PATH...]: TCP on the host's 127.0.0.1 (port in
# $BATS_TEST_TMPDIR/port), a unix socket $BATS_TEST_TMPDIR/host.sock and the
# paths given, and an abstract unix socket; any accepted connection is noted
# in $BATS_TEST_TMPDIR/accepted.
start_host_listeners() {
	"$PY" - "$BATS_TEST_TMPDIR" "$(abstract_name)" "$@" <<'EOF' 3>&- &
import os, select, socket, sys
d, abstract, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
srvs = []
for p in [d + "/host.sock"] + paths:
    u = socket.socket(socket.AF_UNIX); u.bind(p); u.listen(); srvs.append(u)
a = socket.socket(socket.AF_UNIX); a.bind("\0" + abstract[1:]); a.listen(); srvs.append(a)
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(); srvs.append(t)
with open(d + "/port.tmp", "w") as f: f.write(str(t.getsockname()[1]))
os.rename(d + "/port.tmp", d + "/port")
while True:
    for s in select.select(srvs, [], [])[0]:
        c, _ = s.accept()
        with open(d + "/accepted", "a") as f: f.write("x\n")
        c.close()
EOF
	SB_BG_PIDS+=($!)
	sb_wait_for "$BATS_TEST_TMPDIR/port"
}

abstract_name() {
	echo "@sbtest-$$-$BATS_TEST_NUMBER"
}

@test "sandbox hostile: descriptors the caller left open do not reach the sandbox" {
	local secret=$BATS_TEST_TMPDIR/secret
	echo top-secret >"$secret"
	exec 7<"$secret" 8>>"$secret"
	sb_py '
import os
for fd in sorted(int(f) for f in os.listdir("/proc/self/fd")):
    try: print(fd, os.readlink("/proc/self/fd/%d" % fd))
    except OSError: print(fd, "?")
try: print(os.read(7, 100))
except OSError as e: print("fd7", e.errno)
'
	exec 7<&- 8>&-
	assert_success
	local fds
	fds=$(rf .stdout | awk '$1 >= 3 && !/^fd7/ { print }')
	# python's own listing fd is the only one past stdio
	[[ $(grep -c . <<<"$fds") -le 1 && $fds != *secret* ]] || fail "inherited descriptors: $(rf .stdout)"
	[[ $(rf .stdout) != *top-secret* ]] || fail "the caller's fd 7 was readable"
}

# --- resource exhaustion -----------------------------------------------------------------

@test "sandbox hostile: a shell fork bomb is held by --pids and ended by the timeout; the host forks fine" {
	# the shell itself keeps going, so that only the timeout ends the run
	sb_run --pids 32 --timeout "$(sb_secs 3)" -- /bin/bash -c 'b() { b | b & }; b; while :; do sleep 1; done'
	assert_failure 137
	assert_limit_hit pids
	assert_limit timeout
	assert_rf '.pids_peak <= 32' true
	/bin/true || fail "the host cannot fork"
	sb_assert_no_leftovers
}

@test "sandbox hostile: a fork bomb that stops at the first failed fork is crippled by pids" {
	sb_py '
import os, sys, time
n = 0
while True:
    try: pid = os.fork()
    except OSError as e: print("fork failed after", n, e.strerror); sys.exit(3)
    if pid == 0: time.sleep(60); os._exit(0)
    n += 1
' --pids 20 --timeout "$(sb_secs 30)"
	assert_failure 3
	assert_limit pids
	rf .message | grep -qw 20 || fail "message does not give the limit (20): $(rf .message)"
	sb_assert_no_leftovers
}

@test "sandbox hostile: a memory bomb is killed at --memory, named in the receipt, exit 137" {
	sb_py '
chunks = []
while True: chunks.append(bytearray(8 << 20))
' --memory 64M --tmp-size 8M --disk 8M --timeout "$(sb_secs 120)"
	assert_failure 137
	assert_rf .signal SIGKILL
	assert_rf .exit_code null
	assert_limit memory
	rf .message | grep -q '64 MiB' || fail "message does not give the limit in words (64 MiB): $(rf .message)"
	rf .message | grep -q python3 || fail "message does not name the program: $(rf .message)"
	# the cgroup holds it at --memory itself, not more (docs/sandbox.md, Memory)
	assert_rf ".peak_memory_bytes <= .policy.limits.memory_bytes" true
	sb_assert_no_leftovers
}

@test "sandbox hostile: filling the disk through the ephemeral /work stops at --disk" {
	sb_run --disk 16M -- /bin/sh -c 'dd if=/dev/zero of=/work/fill bs=1M count=200 2>&1; s=$?; echo dd=$s; exit $s'
	assert_failure
	assert_limit disk
	rf .stdout | grep -q 'dd=[1-9]' || fail "dd did not fail: $(rf .stdout)"
	local size
	size=$(rf '.files[] | select(.path == "fill") | .size')
	[[ -n $size ]] && ((size <= 17 << 20)) || fail "fill is $size bytes, past --disk 16M"
	sb_assert_no_leftovers
}

@test "sandbox hostile: filling the disk through a --workdir bind is stopped past --disk; the host keeps its space" {
	local w
	w=$(sb_workdir)
	head -c 4M /dev/zero >"$w/existing"
	# 2 GiB if nothing stopped it (--file-size out of the way); the files of a --workdir are on the host's
	# file system, so --disk there is a watch that stops the run past the
	# limit (docs/sandbox.md): the overshoot is what a writer manages
	# between two looks, never the whole
	sb_run --workdir "$w" --disk 16M --file-size 4G --timeout "$(sb_secs 120)" -- \
		/bin/sh -c 'dd if=/dev/zero of=fill bs=1M count=2048 2>&1; s=$?; echo dd=$s; exit $s'
	assert_failure
	assert_limit disk
	rf .message | grep -q '16 MiB' || fail "message does not give the limit: $(rf .message)"
	# either the writes failed or the run was stopped
	[[ $(rf .signal) == SIGKILL ]] || rf .stdout | grep -q 'dd=[1-9]' ||
		fail "dd neither failed nor was stopped: $(rf .stdout)"
	local size
	size=$(stat -c %s "$w/fill")
	((size < 1 << 30)) || fail "$w/fill grew to $size bytes on the host, past --disk 16M"
	# what was there before still is
	[[ $(stat -c %s "$w/existing") -eq $((4 << 20)) ]]
	sb_assert_no_leftovers
}

@test "sandbox hostile: filling /tmp stops at --tmp-size (a disk limit of /tmp), and the host's /tmp is untouched" {
	sb_run --tmp-size 8M -- /bin/sh -c 'dd if=/dev/zero of=/tmp/fill bs=1M count=100 2>&1; s=$?; echo dd=$s; du -k /tmp/fill; exit $s'
	assert_failure
	rf .stdout | grep -q 'dd=[1-9]' || fail "dd did not fail: $(rf .stdout)"
	local k
	k=$(rf .stdout | awk '$2 == "/tmp/fill" { print $1 }')
	((k <= 8192)) || fail "/tmp/fill is $k KiB, past --tmp-size 8M"
	assert_limit disk
	rf .message | grep -q /tmp || fail "the message does not say /tmp filled up: $(rf .message)"
	# no file of that size appeared on the host
	! find /tmp -maxdepth 3 -name fill -size +7M -newer "$RECEIPT" 2>/dev/null | grep -q . ||
		fail "a fill file appeared in the host's /tmp"
	sb_assert_no_leftovers
}

@test "sandbox hostile: a huge single line of output is capped at --output-limit and ends the run" {
	sb_py '
import sys
chunk = "x" * (1 << 20)
for _ in range(64): sys.stdout.write(chunk); sys.stdout.flush()
print("never reached", file=sys.stderr)
' --output-limit 1M
	assert_failure
	assert_limit output
	assert_rf .stdout_truncated true
	assert_rf '.stdout | length <= 1048576' true
	assert_rf '.stdout | length >= 1000000' true
	[[ ${#output} -le $((2 << 20)) ]] || fail "sandrun passed ${#output} bytes through, past the limit"
	[[ $(rf .stderr) != *"never reached"* ]] || fail "the run went on past the output limit"
	sb_assert_no_leftovers
}

# --- processes that try to outlive their time ------------------------------------------------

@test "sandbox hostile: a process ignoring SIGTERM is still ended at the timeout" {
	sb_py '
import signal, time
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1):
    signal.signal(s, signal.SIG_IGN)
print("ignoring", flush=True)
while True: time.sleep(0.1)
' --timeout "$(sb_secs 1)"
	assert_failure
	assert_limit timeout
	rf .message | grep -qE '\b1 ?s' || fail "message does not give the limit (1 s): $(rf .message)"
	assert_rf .stdout ignoring$'\n'
	sb_assert_no_leftovers
}

@test "sandbox hostile: a child that double-forks is gone when the command ends; sandrun does not wait for it" {
	sb_run --timeout "$(sb_secs 60)" -- /bin/sh -c '(setsid sh -c "trap \"\" TERM HUP; sleep 1000" &); (sleep 1000 >/dev/null 2>&1 </dev/null &); echo parent-done'
	assert_success
	assert_rf .stdout parent-done$'\n'
	assert_no_limit
	assert_rf '.duration_ms < 30000' true
	sb_assert_no_leftovers
}

@test "sandbox hostile: a daemon holding stdout open does not keep the run going" {
	sb_run --timeout "$(sb_secs 60)" -- /bin/sh -c 'setsid sh -c "while :; do sleep 1; echo tick; done" & echo started'
	assert_success
	assert_no_limit
	assert_rf '.duration_ms < 30000' true
	sb_assert_no_leftovers
}

# --- privilege ---------------------------------------------------------------------------------

@test "sandbox hostile: setuid binaries give no privilege" {
	local w probe
	w=$(sb_workdir)
	probe=$w/suidprobe
	printf '#include <stdio.h>\n#include <unistd.h>\nint main(void){printf("euid=%%d uid=%%d\\n",(int)geteuid(),(int)getuid());return 0;}\n' >"$BATS_TEST_TMPDIR/p.c"
	cc -o "$probe" "$BATS_TEST_TMPDIR/p.c" || fail "cannot build the probe"
	chown 0:0 "$probe"
	chmod 4755 "$probe"
	sb_run --workdir "$w" -- /bin/sh -c '
		./suidprobe; su -c id root </dev/null 2>&1; echo su=$?
		mkdir -p m; mount -t tmpfs none m 2>&1; echo mount=$?
		passwd -S 2>&1; echo passwd=$?'
	local out
	out=$(rf .stdout)
	local euid uid
	euid=$(sed -n 's/^euid=\([0-9]*\) .*/\1/p' <<<"$out")
	uid=$(sed -n 's/.* uid=\([0-9]*\)$/\1/p' <<<"$out")
	[[ -n $euid && $euid == "$uid" ]] || fail "the setuid probe changed its euid: $out"
	grep -q 'su=[1-9]' <<<"$out" || fail "su succeeded: $out"
	grep -q 'mount=[1-9]' <<<"$out" || fail "mount succeeded: $out"
	! grep -q 'uid=0(root)' <<<"$out" || fail "root: $out"
}

@test "sandbox hostile: unshare -U and unshare -r fail" {
	sb_run -- /bin/sh -c 'unshare -U true 2>&1; echo U=$?; unshare -r id 2>&1; echo r=$?; unshare -m true 2>&1; echo m=$?'
	assert_success
	assert_stdout_has '^U=[1-9]' '^r=[1-9]' '^m=[1-9]' '^unshare: unshare failed: Operation not permitted'

}

@test "sandbox hostile: writes outside /work fail and change nothing on the host" {
	local canary=sbtest-$RANDOM$RANDOM
	sb_run --env "C=$canary" -- /bin/sh -c '
		for p in /$C /usr/$C /usr/bin/$C /etc/$C /lib/$C /bin/$C /dev/$C /proc/$C /sys/$C; do
			echo x > $p 2>/dev/null && echo "WROTE $p"
		done
		echo 1 > /proc/sys/kernel/sysrq 2>/dev/null && echo "WROTE sysrq"
		echo c > /proc/sysrq-trigger 2>/dev/null && echo "WROTE sysrq-trigger"
		mount -o remount,rw /usr 2>/dev/null && echo REMOUNTED
		ln -s /etc/passwd /work/x && echo linked-in-work; true'
	assert_success
	[[ $(rf .stdout) != *WROTE* && $(rf .stdout) != *REMOUNTED* ]] || fail "$(rf .stdout)"
	local p
	for p in /$canary /usr/$canary /usr/bin/$canary /etc/$canary /lib/$canary /dev/$canary; do
		[[ ! -e $p ]] || fail "the sandbox wrote $p on the host"
	done
	assert_rf .stdout linked-in-work$'\n'
}

@test "sandbox hostile: symlinks in --workdir to host files: the host files stay untouched and unread" {
	local w secret=$BATS_TEST_TMPDIR/host-secret
	w=$(sb_workdir)
	echo "host secret $RANDOM" >"$secret"
	chmod 0644 "$secret"
	local secret_sum
	secret_sum=$(sha256sum <"$secret" | cut -c1-64)
	ln -s "$secret" "$w/abs-link"
	ln -s "../host-secret" "$w/rel-link"
	ln -s /etc/shadow "$w/shadow-link"
	mkdir "$w/d"
	ln -s "$BATS_TEST_TMPDIR" "$w/d/dir-link"
	chown -h "$SB_OWNER:$SB_OWNER" "$w"/abs-link "$w"/rel-link "$w"/shadow-link "$w/d" "$w/d/dir-link"
	sb_run --workdir "$w" --collect "$BATS_TEST_TMPDIR/collected" -- /bin/sh -c '
		cat abs-link rel-link shadow-link d/dir-link/host-secret 2>&1
		echo pwned > abs-link 2>&1; echo pwned > rel-link 2>&1; echo pwned > d/dir-link/host-secret 2>&1
		echo pwned >> shadow-link 2>&1
		# new links made inside, for the receipt and --collect to follow if they are careless
		ln -s '"$secret"' new-abs; ln -s ../host-secret new-rel; ln -s /etc/shadow new-shadow
		ln -s '"$BATS_TEST_TMPDIR"' new-dir; true'
	assert_success
	[[ $(rf .stdout) != *"host secret"* ]] || fail "the host file was read through a link: $(rf .stdout)"
	[[ $(sha256sum <"$secret" | cut -c1-64) == "$secret_sum" ]] || fail "the host file was written through a link"
	[[ $(cat /etc/shadow) != *pwned* ]] || fail "/etc/shadow was written"
	# the receipt and --collect never follow a link out of /work
	! grep -qF "$secret_sum" "$RECEIPT" || fail "the receipt hashes the host file behind a link"
	! grep -q 'host secret' "$RECEIPT" || fail "the receipt holds the host file's content"
	local f
	for f in "$BATS_TEST_TMPDIR"/collected/*; do
		[[ ! -f $f || -L $f ]] || ! grep -q 'host secret\|root:' "$f" || fail "--collect copied a host file through $f"
	done
	[[ ! -e $BATS_TEST_TMPDIR/collected/new-dir/host-secret || -L $BATS_TEST_TMPDIR/collected/new-dir ]] ||
		fail "--collect followed a directory link"
	sb_assert_no_leftovers
}

# --- other sandboxes ------------------------------------------------------------------------------

@test "sandbox hostile: a sandbox cannot see, signal or read another concurrent sandbox" {
	local a b
	a=$(sb_workdir a)
	b=$(sb_workdir b)
	sb_start --workdir "$a" --timeout "$(sb_secs 300)" -- python3 -c '
import os, socket, time
open("/tmp/victim-secret", "w").write("victim data")
s = socket.socket(socket.AF_UNIX); s.bind("\0victim"); s.listen()
open("/work/ready", "w").close()
while not os.path.exists("/work/stop"): time.sleep(0.05)
print("victim survived")
'
	local victim=$SB_PID
	sb_wait_for "$a/ready"
	sb_record_running
	# the host pids of the victim's processes, handed to the attacker
	local pids
	pids=$(sb_sandboxed_pids | tr '\n' ' ')
	[[ -n $pids ]] || fail "no process of the victim found"
	sb_run --workdir "$b" --env "VICTIM_PIDS=$pids" -- python3 -c '
import os, signal, socket
mine = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print("visible", mine)
for p in os.environ["VICTIM_PIDS"].split():
    p = int(p)
    for what, f in (("kill", lambda: os.kill(p, signal.SIGKILL)),
                    ("environ", lambda: open("/proc/%d/environ" % p).read()),
                    ("tmp", lambda: open("/proc/%d/root/tmp/victim-secret" % p).read())):
        if p in mine: continue
        try: f(); print("REACHED", what, p)
        except OSError as e: print("refused", what, p, e.errno)
try: os.kill(-1, signal.SIGKILL)
except OSError: pass
s = socket.socket(socket.AF_UNIX)
try: s.connect("\0victim"); print("REACHED abstract")
except OSError as e: print("refused abstract", e.errno)
try: print("REACHED tmp", open("/tmp/victim-secret").read())
except OSError as e: print("refused tmp", e.errno)
'
	[[ $(rf .stdout) != *REACHED* ]] || fail "the attacker reached the victim: $(rf .stdout)"
	[[ $(rf .stdout) == *"refused abstract"* ]] || fail "$(rf .stdout) $(rf .stderr)"
	touch "$a/stop"
	sb_wait_exit "$victim"
	assert_success
	[[ $(cat "$BATS_TEST_TMPDIR/bg.out") == "victim survived" ]] ||
		fail "the victim did not survive: $(cat "$BATS_TEST_TMPDIR/bg.out" "$BATS_TEST_TMPDIR/bg.err")"
	sb_assert_no_leftovers
}
