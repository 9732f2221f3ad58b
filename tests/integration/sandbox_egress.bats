#!/usr/bin/env bats
# The sandbox's egress gateway (issue 13): deny by default, allow by name,
# every attempt in the receipt.  The upstream servers (HTTP, HTTPS with a
# self-signed certificate, a TCP echo) run in a network namespace this file
# creates and removes itself, reached over a veth pair; names for them come
# from --add-host.  No test needs the internet.

load helpers

setup_file() {
	local n=$(($$ % 200 + 20))
	export EG_NS=sregress$$ EG_HOST_IF=sreh$$ EG_SRV_IF=sres$$
	export EG_NET=10.213.$n EG_SRV=10.213.$n.2 EG_SRV2=10.213.$n.3
	export EG_DIR=$BATS_FILE_TMPDIR
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=web.test \
		-addext "subjectAltName=DNS:web.test,DNS:other.test" \
		-keyout "$EG_DIR/key.pem" -out "$EG_DIR/cert.pem" 2>/dev/null
	chmod 644 "$EG_DIR/cert.pem"
	ip netns add "$EG_NS"
	ip link add "$EG_HOST_IF" type veth peer name "$EG_SRV_IF"
	ip link set "$EG_SRV_IF" netns "$EG_NS"
	ip addr add "$EG_NET.1/24" dev "$EG_HOST_IF"
	ip link set "$EG_HOST_IF" up
	ip -n "$EG_NS" addr add "$EG_SRV/24" dev "$EG_SRV_IF"
	ip -n "$EG_NS" addr add "$EG_SRV2/24" dev "$EG_SRV_IF"
	ip -n "$EG_NS" link set "$EG_SRV_IF" up
	ip -n "$EG_NS" link set lo up
	ip netns exec "$EG_NS" python3 "$REPO_ROOT/tests/helpers/egress_servers.py" 0.0.0.0 \
		"$EG_DIR/cert.pem" "$EG_DIR/key.pem" >"$EG_DIR/servers.out" 2>&1 3>&- &
	echo $! >"$EG_DIR/servers.pid"
	for _ in $(seq 100); do grep -q READY "$EG_DIR/servers.out" && return 0; sleep 0.1; done
	cat "$EG_DIR/servers.out" >&2
	return 1
}

teardown_file() {
	[[ -s $EG_DIR/servers.pid ]] && kill "$(cat "$EG_DIR/servers.pid")" 2>/dev/null
	ip link del "$EG_HOST_IF" 2>/dev/null || true
	ip netns del "$EG_NS" 2>/dev/null || true
}

setup() {
	ROOT=$BATS_TEST_TMPDIR/root
	WD=$BATS_TEST_TMPDIR/work
	TEST_MARK="SANDRUN_TEST_MARK=$BATS_TEST_TMPDIR"
	mkdir -p "$ROOT" "$WD"
	cp "$EG_DIR/cert.pem" "$WD/cert.pem"
	# an unprivileged owner: a root-owned --workdir needs an idmapped mount,
	# which tmpfs (this /tmp in the cgroup v2 guest) lacks before Linux 6.3
	chown -R 65534:65534 "$WD"
	export ROOT WD TEST_MARK
}

teardown() {
	local pid
	# the supervisors of sessions a failed test left (the gateway dies with its own)
	for pid in $("$RUNTIME" --root "$ROOT" sandbox list --format json 2>/dev/null | jq -r '.[].pid' 2>/dev/null); do
		kill -9 "$pid" 2>/dev/null || true
	done
	kill_marked_processes
	[[ -n ${SANDRUN_PID:-} ]] && kill -9 "$SANDRUN_PID" 2>/dev/null
	rm -rf "$ROOT"
}

# egress ARG... -- CMD: a sandbox with the test servers' names declared,
# /work holding the server certificate, the receipt in receipt.json.
egress() {
	runtime sandbox --env "$TEST_MARK" --receipt "$BATS_TEST_TMPDIR/receipt.json" \
		--workdir "$WD" --timeout 60s --add-host "web.test:$EG_SRV" \
		--add-host "other.test:$EG_SRV" --add-host "echo.test:$EG_SRV" \
		--add-host "meta.test:169.254.169.254" "$@"
}

receipt() {
	jq -r "$1" "$BATS_TEST_TMPDIR/receipt.json"
}

# The receipt's network entries as "protocol host port decision" lines.
attempts() {
	receipt '.network[] | "\(.protocol) \(.host) \(.port) \(.decision)"'
}

CURL='curl -sS -m 10 --cacert /work/cert.pem'

@test "egress: an allowed name over HTTP, through the proxy and transparently" {
	run --separate-stderr egress --allow-host web.test -- sh -c "
		$CURL -w ' %{size_request}\n' http://web.test/a
		$CURL --noproxy '*' -w ' %{size_request} %{size_header} %{size_download}\n' http://web.test/b"
	[[ $status -eq 0 ]] || fail "status $status: $stderr"
	[[ ${lines[0]} == "hello from web.test" ]] || fail "proxy: $output"
	[[ ${lines[2]} == "hello from web.test" ]] || fail "transparent: $output"
	read -r req hdr body <<<"${lines[3]}"
	[[ $(attempts | grep -c '^http web.test 80 allowed$') -eq 2 ]] || fail "$(attempts)"
	# the transparent request went out as it was written, the answer whole
	[[ $(receipt '[.network[] | select(.protocol == "http")][1].bytes_out') -eq $req ]]
	[[ $(receipt '[.network[] | select(.protocol == "http")][1].bytes_in') -eq $((hdr + body)) ]]
	[[ $(receipt '[.network[] | select(.protocol == "http")][1].address') == "$EG_SRV" ]]
	# the proxy rewrote http://web.test/a to /a
	read -r preq <<<"${lines[1]}"
	[[ $(receipt '[.network[] | select(.protocol == "http")][0].bytes_out') -eq $((preq - 15)) ]]
	[[ $(receipt '.policy.network') == gateway ]]
	[[ $(receipt '.limits_hit | length') -eq 0 ]]
}

@test "egress: HTTPS through CONNECT, transparently, and with python3 urllib" {
	run --separate-stderr egress --allow-host web.test -- sh -c "
		$CURL https://web.test/
		$CURL --noproxy '*' https://web.test/
		python3 -c \"
import ssl, urllib.request
ctx = ssl.create_default_context(cafile='/work/cert.pem')
print(urllib.request.urlopen('https://web.test/u', context=ctx, timeout=10).read().decode(), end='')\""
	[[ $status -eq 0 ]] || fail "status $status: $stderr"
	[[ $(grep -c '^hello from web.test$' <<<"$output") -eq 3 ]] || fail "$output"
	[[ $(attempts | grep -c '^https web.test 443 allowed$') -eq 3 ]] || fail "$(attempts)"
	[[ $(receipt '[.network[] | select(.protocol == "https") | .bytes_in > 1000] | all') == true ]]
}

@test "egress: a name not on the list is denied, over HTTP, HTTPS and DNS" {
	run --separate-stderr egress --allow-host web.test -- sh -c "
		$CURL -w '%{http_code}\n' http://other.test/
		$CURL https://other.test/ || echo https-refused
		getent hosts other.test || echo dns-refused
		getent hosts web.test"
	[[ ${lines[0]} == "sandrun: other.test is not on the allow-list" ]] || fail "$output"
	[[ ${lines[1]} == 403 ]] || fail "$output"
	[[ $output == *https-refused* && $output == *dns-refused* ]] || fail "$output"
	[[ $output == *"$EG_SRV"*web.test* ]] || fail "the allowed name was not answered: $output"
	attempts | grep -q '^http other.test 80 denied$' || fail "$(attempts)"
	attempts | grep -q '^https other.test 443 denied$' || fail "$(attempts)"
	attempts | grep -q '^dns other.test 53 denied$' || fail "$(attempts)"
	attempts | grep -q '^dns web.test 53 allowed$' || fail "$(attempts)"
	[[ $(receipt '[.network[] | select(.host == "other.test") | .reason] | unique[]') == \
		"other.test is not on the allow-list" ]]
	[[ $(receipt '.limits_hit | index("network")') != null ]]
}

@test "egress: a ClientHello whose SNI differs from the CONNECT name is refused" {
	run --separate-stderr egress --allow-host web.test -- sh -c "
		echo | openssl s_client -proxy 127.0.0.1:3128 -connect web.test:443 \
			-servername other.test >/dev/null 2>&1 && echo handshake-done
		$CURL https://web.test/"
	[[ $output != *handshake-done* ]] || fail "the fronted handshake went through"
	[[ $output == "hello from web.test" ]] || fail "$output"
	[[ $(receipt '.network[0].reason') == "SNI other.test does not match CONNECT web.test" ]] \
		|| fail "$(receipt '.network')"
	[[ $(receipt '.network[0].decision') == denied ]]
	[[ $(receipt '.network[0].bytes_out') -eq 0 ]]
}

@test "egress: a bare address is denied, an allowed CIDR is not" {
	run --separate-stderr egress --allow-host web.test --allow-host "$EG_SRV2/32" -- sh -c "
		$CURL --noproxy '*' http://$EG_SRV/ || echo bare-refused
		$CURL http://$EG_SRV/ || echo bare-refused-proxy
		$CURL --noproxy '*' http://$EG_SRV2/"
	[[ ${lines[0]} == "sandrun: $EG_SRV port 80 is not on the allow-list" ]] || fail "$output"
	[[ $output == *"hello from $EG_SRV2"* ]] || fail "$output"
	[[ $(attempts | grep -c "^http $EG_SRV 80 denied$") -eq 2 ]] || fail "$(attempts)"
	attempts | grep -q "^http $EG_SRV2 80 allowed$" || fail "$(attempts)"
}

@test "egress: UDP, ICMP and raw sockets get nowhere" {
	run --separate-stderr egress --allow-host web.test -- python3 -c "
import socket
for what, mk, dst in (('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM), ('$EG_SRV', 9999)),
                      ('icmp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP), ('$EG_SRV', 0)),
                      ('raw', lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP), ('$EG_SRV', 0))):
    try:
        s = mk()
        s.sendto(b'\x08\x00\xf7\xff\x00\x00\x00\x00', dst)
        print(what, 'sent')
    except OSError as e:
        print(what, 'refused', e.errno)
"
	[[ $status -eq 0 ]] || fail "$stderr"
	[[ $output != *sent* ]] || fail "$output"
	[[ $(grep -c refused <<<"$output") -eq 3 ]] || fail "$output"
}

@test "egress: the metadata address is denied, also when an allowed name maps to it" {
	run --separate-stderr egress --allow-host meta.test --allow-host web.test -- sh -c "
		$CURL http://meta.test/latest/meta-data/
		$CURL --noproxy '*' http://169.254.169.254/latest/meta-data/
		getent hosts meta.test || echo dns-refused"
	[[ ${lines[0]} == "sandrun: 169.254.169.254 is a link-local address (meta.test resolves to it)" ]] \
		|| fail "$output"
	[[ ${lines[1]} == "sandrun: 169.254.169.254 port 80 is not on the allow-list" ]] || fail "$output"
	[[ $output == *dns-refused* ]] || fail "$output"
	[[ $(receipt '[.network[] | select(.decision == "allowed")] | length') -eq 0 ]] \
		|| fail "$(receipt '.network')"
}

@test "egress: TCP to an allowed name and port; the byte counts are exact" {
	run --separate-stderr egress --allow-host echo.test:7 -- python3 -c "
import socket
s = socket.create_connection(('echo.test', 7), timeout=10)
data = b'x' * 300000
s.sendall(data)
s.shutdown(socket.SHUT_WR)
got = b''
while True:
    b = s.recv(65536)
    if not b: break
    got += b
print(len(got))
# refused after the handshake: the kernel completes it before the gateway
# can know where the connection was going
try:
    s = socket.create_connection(('echo.test', 8), timeout=10)
    s.sendall(b'hi')
    print('port 8 open' if s.recv(10) else 'port 8 refused')
except OSError as e:
    print('port 8 refused')
"
	[[ ${lines[0]} == 300000 ]] || fail "$output $stderr"
	[[ ${lines[1]} == "port 8 refused" ]] || fail "$output"
	[[ $(receipt '.network[] | select(.protocol == "tcp" and .port == 7) | "\(.bytes_out) \(.bytes_in) \(.decision)"') == \
		"300000 300000 allowed" ]] || fail "$(receipt '.network')"
	[[ $(receipt '.network[] | select(.port == 8) | "\(.decision): \(.reason)"') == \
		"denied: $EG_SRV port 8 is not on the allow-list" ]] || fail "$(receipt '.network')"
}

@test "egress: --net-max-bytes closes the connections at the limit" {
	run --separate-stderr egress --allow-host web.test --net-max-bytes 64K -- sh -c "
		$CURL -o /dev/null http://web.test/bytes/1000000 || echo cut
		$CURL http://web.test/"
	[[ ${lines[0]} == cut ]] || fail "$output"
	[[ ${lines[1]} == "sandrun: the sandbox used its network limit of 65536 bytes" ]] || fail "$output"
	[[ $(receipt '.limits_hit | index("network_bytes")') != null ]] || fail "$(receipt '.limits_hit')"
	local total
	total=$(receipt '[.network[] | .bytes_in + .bytes_out] | add')
	((total <= 65536)) || fail "$total bytes went through"
	receipt '.network[0].reason' | grep -q 'network limit of 65536 bytes' || fail "$(receipt '.network')"
}

@test "egress: --net-max-connections refuses the connection after the last" {
	run --separate-stderr egress --allow-host web.test --net-max-connections 2 -- sh -c "
		for i in 1 2 3; do $CURL -w ' %{http_code}\n' http://web.test/; done"
	[[ $(grep -c '^hello from web.test$' <<<"$output") -eq 2 ]] || fail "$output"
	[[ $output == *"the sandbox used its limit of 2 connections"* ]] || fail "$output"
	[[ $(receipt '.network[2].decision') == denied ]]
	[[ $(receipt '.limits_hit | index("network")') != null ]]
	[[ $(receipt '.limits_hit | index("network_connections")') != null ]]
}

@test "egress: 20 concurrent connections, every one recorded" {
	run --separate-stderr egress --allow-host web.test -- python3 -c "
import os, ssl, threading, urllib.request
ctx = ssl.create_default_context(cafile='/work/cert.pem')
ok = []
def get(i):
    url = ('https' if i % 2 else 'http') + '://web.test/bytes/100000'
    if i % 4 < 2:
        op = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ctx))
    else:
        op = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx))
    ok.append(len(op.open(url, timeout=20).read()))
ts = [threading.Thread(target=get, args=(i,)) for i in range(20)]
[t.start() for t in ts]
[t.join() for t in ts]
print(len(ok), sum(ok))
"
	[[ $output == "20 2000000" ]] || fail "$output $stderr"
	[[ $(receipt '[.network[] | select(.protocol != "dns" and .decision == "allowed")] | length') -eq 20 ]] \
		|| fail "$(receipt '.network')"
	[[ $(receipt '[.network[] | select(.protocol == "http") | .bytes_in >= 100000] | all') == true ]]
}

# The gateway, a child of the sandrun at $1 (the sandbox's own processes
# are marked; the gateway is not).
gateway_pid() {
	local p
	for p in $(ps -o pid= --ppid "$1"); do
		[[ $(cat /proc/"$p"/comm 2>/dev/null) == sandrun-egress ]] && echo "$p"
	done
	return 0
}

@test "egress: malformed input neither crashes the gateway nor leaks its fds" {
	cat >"$WD/bad.py" <<-'PY'
	import socket, sys, time
	def flag(name):
	    open('/work/' + name, 'w').close()
	    while not __import__('os').path.exists('/work/' + name + '.ack'):
	        time.sleep(0.05)
	def conn(port):
	    return socket.create_connection(('127.0.0.1', port), timeout=15)
	def drain(s):
	    try:
	        while s.recv(65536): pass
	    except OSError: pass
	def attempt(port, *chunks):
	    # the gateway may reset a connection it refused while we still write
	    try:
	        s = conn(port)
	        for c in chunks:
	            if c is None:
	                s.recv(100)
	            else:
	                s.sendall(c)
	        s.shutdown(socket.SHUT_WR)
	        drain(s)
	    except OSError:
	        pass
	flag('before')
	attempt(3128, b'\x00\xff garbage \r\n\r\n')
	attempt(3128, b'GET http://web.test/ HTTP/1.1\r\nX: ' + b'a' * (1 << 20))
	attempt(3128, b'CONNECT web.test:443 HTTP/1.1\r\n\r\n', None,
	        b'\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03')
	try:
	    t = socket.create_connection(('web.test', 443), timeout=15)
	    t.sendall(b'\x16\x03\x01\x02\x00\x01\x00'); t.shutdown(socket.SHUT_WR); drain(t)
	except OSError:
	    pass
	slow = conn(3128)
	start = time.time()
	try:
	    for c in b'GET http://web.test/ HTTP/1.1\r\nHost: web.test\r\n':
	        slow.send(bytes([c])); time.sleep(0.3)
	    print('slowloris served')
	except OSError:
	    print('slowloris cut')
	drain(slow)
	import urllib.request
	print(urllib.request.urlopen('http://web.test/', timeout=10).read().decode(), end='')
	flag('after')
	PY
	"$RUNTIME" --root "$ROOT" sandbox --env "$TEST_MARK" --receipt "$BATS_TEST_TMPDIR/receipt.json" \
		--workdir "$WD" --timeout 60s --add-host "web.test:$EG_SRV" --allow-host web.test \
		-- python3 /work/bad.py >"$BATS_TEST_TMPDIR/out" 2>&1 3>&- &
	SANDRUN_PID=$!
	local gw="" before after
	for _ in $(seq 200); do [[ -e $WD/before ]] && break; sleep 0.1; done
	gw=$(gateway_pid "$SANDRUN_PID")
	[[ -n $gw ]] || fail "no gateway process"
	before=$(ls /proc/"$gw"/fd | wc -l)
	touch "$WD/before.ack"
	for _ in $(seq 400); do [[ -e $WD/after ]] && break; sleep 0.1; done
	[[ -e $WD/after ]] || fail "the script did not finish: $(cat "$BATS_TEST_TMPDIR/out")"
	after=$(ls /proc/"$gw"/fd | wc -l)
	touch "$WD/after.ack"
	wait "$SANDRUN_PID"
	SANDRUN_PID=
	grep -q 'slowloris cut' "$BATS_TEST_TMPDIR/out" || fail "$(cat "$BATS_TEST_TMPDIR/out")"
	grep -q 'hello from web.test' "$BATS_TEST_TMPDIR/out" || fail "$(cat "$BATS_TEST_TMPDIR/out")"
	[[ $before -eq $after ]] || fail "gateway fds: $before before, $after after"
	! pid_alive "$gw" || fail "the gateway outlived its sandbox"
	[[ $(receipt '[.network[] | select(.decision == "denied")] | length') -ge 4 ]] || fail "$(receipt '.network')"
	receipt '.network[].reason' | grep -q 'no complete request arrived within 5 s' || fail "$(receipt '.network')"
}

@test "egress: nothing is left when sandrun is killed" {
	"$RUNTIME" --root "$ROOT" sandbox --env "$TEST_MARK" --workdir "$WD" --timeout 60s \
		--allow-host web.test -- sh -c 'touch /work/started; sleep 50' 3>&- &
	SANDRUN_PID=$!
	for _ in $(seq 200); do [[ -e $WD/started ]] && break; sleep 0.1; done
	local gw
	gw=$(gateway_pid "$SANDRUN_PID")
	[[ -n $gw ]] || fail "no gateway process"
	kill -9 "$SANDRUN_PID"
	wait "$SANDRUN_PID" || true
	SANDRUN_PID=
	wait_pid_gone "$gw" || fail "the gateway outlived a killed sandrun"
}

@test "egress: bad --allow-host and --add-host values are one-line errors" {
	run --separate-stderr runtime sandbox --allow-host 'web.test:0' -- true
	[[ $status -eq 125 ]]
	[[ $stderr == 'sandrun: sandbox: --allow-host "web.test:0": expected a port number 1-65535 after the colon' ]] \
		|| fail "$stderr"
	run --separate-stderr runtime sandbox --allow-host web.test --add-host 'web.test' -- true
	[[ $status -eq 125 ]]
	[[ $stderr == *'--add-host "web.test": expected NAME:ADDRESS'* ]] || fail "$stderr"
}

@test "egress: without --allow-host the sandbox has only loopback and an empty network list" {
	run --separate-stderr runtime sandbox --receipt "$BATS_TEST_TMPDIR/receipt.json" \
		-- sh -c "$CURL --noproxy '*' http://$EG_SRV/ || echo unreachable"
	[[ $output == *unreachable* ]] || fail "$output"
	[[ $(receipt '.network | length') -eq 0 ]]
	[[ $(receipt '.policy.network') == none ]]
}

# --- sessions (issue 14): one gateway for the session, each execution's
# receipt lists the attempts made during it ---

# session_start NAME ARG...: a session with the test servers' names
# declared and /work holding the server certificate.
session_start() {
	local name=$1
	shift
	runtime sandbox start --name "$name" --env "$TEST_MARK" --workdir "$WD" --timeout 60s \
		--add-host "web.test:$EG_SRV" --add-host "other.test:$EG_SRV" "$@"
}

# session_exec NAME N ARG...: one execution, its receipt in rN.json
# (checked against the schema), its output in $output.
session_exec() {
	local name=$1 n=$2
	shift 2
	run --separate-stderr runtime sandbox exec "$name" --receipt "$BATS_TEST_TMPDIR/r$n.json" "$@"
	/usr/bin/python3 "$REPO_ROOT/tests/helpers/validate-receipt.py" "$BATS_TEST_TMPDIR/r$n.json" \
		|| fail "receipt $n is not valid"
}

# rn N FILTER: a jq filter on receipt N.
rn() {
	jq -r "$2" "$BATS_TEST_TMPDIR/r$1.json"
}

session_pid() {
	"$RUNTIME" --root "$ROOT" sandbox list --format json | jq -r --arg n "$1" '.[] | select(.name == $n) | .pid'
}

@test "egress: a session reaches an allowed name in one execution, is denied another in the next; each receipt has its own attempts" {
	local S=eg$$ sv gw id
	session_start "$S" --allow-host web.test
	sv=$(session_pid "$S")
	[[ -n $sv ]] || fail "no session"
	id=$("$RUNTIME" --root "$ROOT" sandbox list --format json | jq -r '.[0].id')
	gw=$(gateway_pid "$sv")
	[[ -n $gw ]] || fail "no gateway process under the supervisor $sv"

	session_exec "$S" 1 -- sh -c "printenv HTTPS_PROXY; $CURL http://web.test/one"
	[[ $status -eq 0 ]] || fail "status $status: $output $stderr"
	[[ ${lines[0]} == http://127.0.0.1:3128 ]] || fail "no proxy variables: $output"
	[[ ${lines[1]} == "hello from web.test" ]] || fail "$output"
	[[ $(rn 1 '[.network[] | "\(.protocol) \(.host) \(.port) \(.decision)"] | join(",")') == \
		"http web.test 80 allowed" ]] || fail "$(rn 1 .network)"
	[[ $(rn 1 .policy.network) == gateway ]]
	[[ $(rn 1 '.policy.egress.allow_hosts | join(",")') == web.test ]]
	[[ $(rn 1 '.limits_hit | length') -eq 0 ]]

	session_exec "$S" 2 -- sh -c "$CURL -w '%{http_code}\n' http://other.test/; $CURL --noproxy '*' http://other.test/ || echo refused"
	[[ ${lines[0]} == "sandrun: other.test is not on the allow-list" ]] || fail "$output"
	[[ ${lines[1]} == 403 ]] || fail "$output"
	[[ $(rn 2 '[.network[] | select(.protocol != "dns") | "\(.protocol) \(.host) \(.port) \(.decision)"] | join(",")') == \
		"http other.test 80 denied" ]] || fail "$(rn 2 .network)"
	# the direct request's name lookup
	[[ $(rn 2 '[.network[] | "\(.protocol) \(.host) \(.decision)"] | unique | join(",")') == \
		"dns other.test denied,http other.test denied" ]] \
		|| fail "$(rn 2 .network)"
	[[ $(rn 2 '.limits_hit | index("network")') != null ]] || fail "$(rn 2 .limits_hit)"

	# an execution without traffic has none
	session_exec "$S" 3 -- true
	[[ $(rn 3 '.network | length') -eq 0 ]] || fail "$(rn 3 .network)"
	[[ $(rn 3 '.limits_hit | length') -eq 0 ]] || fail "$(rn 3 .limits_hit)"

	runtime sandbox stop "$S"
	wait_pid_gone "$gw" || fail "the gateway outlived its session"
	[[ ! -e $ROOT/.sandbox/sessions/$S ]] || fail "session state left behind"
	BUNDLE=$BATS_TEST_TMPDIR assert_no_leftovers "$id"
}

@test "egress: a session's connection left open by a background process is listed by the execution during which it closes" {
	local S=eg$$
	session_start "$S" --allow-host echo.test:7 --add-host "echo.test:$EG_SRV"
	cat >"$WD/hold.py" <<-'PY'
	import os, socket, time
	s = socket.create_connection(("echo.test", 7), timeout=10)
	s.sendall(b"held")
	s.recv(4)
	open("/tmp/connected", "w").close()
	while not os.path.exists("/tmp/close"):
	    time.sleep(0.05)
	s.close()
	open("/tmp/closed", "w").close()
	PY
	session_exec "$S" 1 -- sh -c 'python3 /work/hold.py </dev/null >/dev/null 2>&1 &
		for i in $(seq 200); do [ -e /tmp/connected ] && exit 0; sleep 0.05; done; exit 1'
	[[ $status -eq 0 ]] || fail "the background connection was not made: $stderr"
	[[ $(rn 1 '[.network[] | select(.protocol == "tcp")] | length') -eq 0 ]] || fail "$(rn 1 .network)"
	session_exec "$S" 2 -- sh -c 'touch /tmp/close
		for i in $(seq 200); do [ -e /tmp/closed ] && exit 0; sleep 0.05; done; exit 1'
	[[ $status -eq 0 ]] || fail "the background process did not close: $stderr"
	[[ $(rn 2 '[.network[] | select(.protocol == "tcp") | "\(.host) \(.port) \(.decision) \(.bytes_out)"] | join(",")') == \
		"echo.test 7 allowed 4" ]] || fail "$(rn 2 .network)"
	runtime sandbox stop "$S"
}

@test "egress: a session's --net-max-connections is the session's; only the execution that reached it is named" {
	local S=eg$$
	session_start "$S" --allow-host web.test --net-max-connections 2
	session_exec "$S" 1 -- sh -c "$CURL http://web.test/"
	[[ $output == "hello from web.test" ]] || fail "$output $stderr"
	[[ $(rn 1 '.limits_hit | length') -eq 0 ]] || fail "$(rn 1 .limits_hit)"
	session_exec "$S" 2 -- sh -c "$CURL http://web.test/; $CURL http://web.test/"
	[[ $(grep -c '^hello from web.test$' <<<"$output") -eq 1 ]] || fail "$output"
	[[ $(rn 2 '[.network[].decision] | join(",")') == allowed,denied ]] || fail "$(rn 2 .network)"
	[[ $(rn 2 '.limits_hit | index("network_connections")') != null ]] || fail "$(rn 2 .limits_hit)"
	session_exec "$S" 3 -- sh -c "$CURL http://web.test/"
	[[ $(rn 3 '[.network[].decision] | join(",")') == denied ]] || fail "$(rn 3 .network)"
	[[ $(rn 3 '.limits_hit | index("network_connections")') == null ]] || fail "$(rn 3 .limits_hit)"
	[[ $(rn 3 '.limits_hit | index("network")') != null ]] || fail "$(rn 3 .limits_hit)"
	runtime sandbox stop "$S"
}

@test "egress: a session whose --allow-host is bad is a one-line error, nothing is left" {
	run --separate-stderr runtime sandbox start --name "eg$$" --allow-host 'web.test:0'
	[[ $status -eq 125 ]] || fail "status $status"
	[[ $stderr == 'sandrun: sandbox start: --allow-host "web.test:0": expected a port number 1-65535 after the colon' ]] \
		|| fail "$stderr"
	[[ ! -e $ROOT/.sandbox/sessions/eg$$ ]] || fail "session state left behind"
}

@test "egress: a session whose gateway fails to start is not started: one line, nothing left" {
	local bin=$BATS_TEST_TMPDIR/bin
	mkdir -p "$bin"
	cp "$RUNTIME" "$bin/sandrun"
	# the gateway beside the sandrun that runs is the one used: one that
	# fails with a message, and one that dies without a word
	cat >"$bin/sandrun-egress" <<-'SH'
	#!/usr/bin/python3
	import os, sys
	if os.path.exists(sys.argv[0] + ".mute"):
	    sys.exit(1)
	os.write(int(sys.argv[sys.argv.index("--control-fd") + 1]), b"error no namespace here (test)\n")
	SH
	chmod +x "$bin/sandrun-egress"
	run --separate-stderr timeout 60 "$bin/sandrun" --root "$ROOT" sandbox start --name "eg$$" \
		--env "$TEST_MARK" --allow-host web.test 3>&-
	[[ $status -eq 125 ]] || fail "status $status: $stderr"
	[[ $stderr == 'sandrun: sandbox start: egress gateway: no namespace here (test)' ]] || fail "$stderr"
	touch "$bin/sandrun-egress.mute"
	run --separate-stderr timeout 60 "$bin/sandrun" --root "$ROOT" sandbox start --name "eg$$" \
		--env "$TEST_MARK" --allow-host web.test 3>&-
	[[ $status -eq 125 ]] || fail "status $status: $stderr"
	[[ $stderr == 'sandrun: sandbox start: egress gateway: exited before it was ready' ]] || fail "$stderr"
	[[ ! -e $ROOT/.sandbox/sessions/eg$$ ]] || fail "session state left behind"
	[[ -z $(find "$ROOT/.sandbox" -mindepth 1 -maxdepth 1 -name 'sandbox-*') ]] || fail "a bundle was left"
	run runtime list -q
	[[ -z $output ]] || fail "containers left behind: $output"
	[[ -z $(live_marked_pids) ]] || fail "processes left behind"
}
