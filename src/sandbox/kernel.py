"""sandrun's python kernel driver (issue 14), standard library only.

Installed by sandrun at /tmp/.sandrun-kernel/driver.py in a session started
with --kernel python.  `driver.py serve` is the interpreter that lives as
long as the session (its globals persist); `driver.py run` is one
execution's client, started by `sandbox exec` with the code on stdin and
the receipt's kernel part to write on fd 3.  The client passes its own
stdin/stdout/stderr to the interpreter (SCM_RIGHTS over an abstract unix
socket, private to the sandbox's network namespace), so the output of the
code and of the processes it starts goes straight to sandrun's pipes.
"""
import json, os, signal, socket, sys, time

ADDR = "\0sandrun-kernel"
CAP = 64 * 1024


def cap(s):
    return s if s is None or len(s) <= CAP else s[:CAP] + "\n[truncated]"


def recv_all(sock):
    buf = b""
    while not buf.endswith(b"\n"):
        b = sock.recv(65536)
        if not b:
            return None
        buf += b
    return json.loads(buf)


def execute(code, ns):
    import ast, traceback  # the interpreter's only: the client starts faster
    res = {"exception": None, "traceback": None, "value": None, "interrupted": False}
    try:
        tree = ast.parse(code, "<exec>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<exec>", "exec"), ns)
        if last is not None:
            v = eval(compile(last, "<exec>", "eval"), ns)
            if v is not None:
                res["value"] = cap(repr(v))
    except BaseException as e:  # SystemExit and KeyboardInterrupt too
        if isinstance(e, KeyboardInterrupt):
            res["interrupted"] = True
        res["exception"] = cap("".join(traceback.format_exception_only(type(e), e)).strip())
        tb = e.__traceback__.tb_next or e.__traceback__  # not this frame
        res["traceback"] = cap("".join(traceback.format_exception(type(e), e, tb)))
        traceback.print_exception(type(e), e, tb)
    return res


def serve():
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(ADDR)
    srv.listen(4)
    os.write(3, b"ready\n")
    os.close(3)
    ns = {"__name__": "__main__", "__builtins__": __builtins__}
    saved = [os.dup(i) for i in (0, 1, 2)]
    signal.signal(signal.SIGINT, signal.default_int_handler)
    while True:
        try:
            conn, _ = srv.accept()
        except KeyboardInterrupt:
            continue  # an interrupt that came after the code ended
        res = {"exception": "KeyboardInterrupt", "traceback": None, "value": None,
               "interrupted": True}
        try:
            msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
            if len(fds) != 3:
                conn.close()
                continue
            while not msg.endswith(b"\n"):  # a large code comes in parts
                more = conn.recv(1 << 20)
                if not more:
                    raise EOFError("the client went away")
                msg += more
            req = json.loads(msg)
            for i in (0, 1, 2):
                os.dup2(fds[i], i)
                os.close(fds[i])
            sys.stdin = open(0, "r", closefd=False)
            res = execute(req["code"], ns)
            for f in (sys.stdout, sys.stderr):
                try:
                    f.flush()
                except Exception:
                    pass
        except KeyboardInterrupt:
            pass  # before or after the code: the answer says interrupted
        except Exception as e:
            res = {"exception": "sandrun kernel: %r" % e, "traceback": None,
                   "value": None, "interrupted": False}
        finally:
            for i in (0, 1, 2):
                os.dup2(saved[i], i)
        for _ in range(3):  # an interrupt may come while answering, too
            try:
                res["pid"] = os.getpid()
                conn.sendall(json.dumps(res).encode() + b"\n")
                break
            except KeyboardInterrupt:
                continue
            except OSError:
                break
        conn.close()


def start_server():
    """A new interpreter, detached from this client (the sandbox's init
    adopts it); returns once it listens."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        os.close(r)
        os.dup2(w, 3)
        null = os.open("/dev/null", os.O_RDWR)
        for i in (0, 1, 2):
            os.dup2(null, i)
        os.execv(sys.executable, [sys.executable, __file__, "serve"])
    os.close(w)
    os.waitpid(pid, 0)
    ok = os.read(r, 16)
    os.close(r)
    return ok == b"ready\n"


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)  # an interpreter that no longer accepts counts as gone
    s.connect(ADDR)
    s.settimeout(None)
    return s


def run():
    # First: sandrun's SIGINT at the timeout (ignored until now).
    interrupted = [False]

    def on_int(*_):
        interrupted[0] = True
    signal.signal(signal.SIGINT, on_int)
    code = sys.stdin.read()
    out = {"restarted": False, "state_lost": False}
    try:
        sock = connect()
    except OSError:
        kill_server()  # deaf, if it is there at all
        # No interpreter: the first execution starts it; a later one finds
        # it gone (it was killed) and says the state was lost.
        marker = os.path.exists("/tmp/.sandrun-kernel-started")
        if not start_server():
            print("sandrun kernel: python3 could not start", file=sys.stderr)
            return 125
        if marker:
            out["restarted"] = out["state_lost"] = True
        try:
            open("/tmp/.sandrun-kernel-started", "w").close()
        except OSError:
            pass
        sock = connect()
    # The code came on our stdin: its own stdin is empty.
    rfd, wfd = os.pipe()
    os.close(wfd)
    req = json.dumps({"code": code}).encode() + b"\n"
    sent = socket.send_fds(sock, [req], [rfd, 1, 2])
    if sent < len(req):
        sock.sendall(req[sent:])
    os.close(rfd)
    pid = None
    res = None
    buf = b""
    deadline = None
    sock.settimeout(0.1)
    while True:
        if interrupted[0] and deadline is None:
            deadline = time.monotonic() + 1.5
            kernel_pid = read_pid()
            if kernel_pid:
                try:
                    os.kill(kernel_pid, signal.SIGINT)
                except OSError:
                    pass
        if deadline is not None and time.monotonic() > deadline:
            break
        try:
            b = sock.recv(65536)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        if not b:
            break
        buf += b
        if buf.endswith(b"\n"):
            res = json.loads(buf)
            break
    if res is None:
        # Dead (the memory limit) or deaf to SIGINT: a new interpreter.
        kill_server()
        for _ in range(100):
            try:
                connect().close()
                time.sleep(0.01)
            except OSError:
                break
        start_server()
        out.update(restarted=True, state_lost=True, interrupted=interrupted[0])
        os.write(3, json.dumps(out).encode())
        return 137 if not interrupted[0] else 130
    res.update(out)
    os.write(3, json.dumps(res).encode())
    if res.get("interrupted"):
        return 130
    return 1 if res.get("exception") else 0


def kill_server():
    """The interpreter and what it started (its process group)."""
    pid = read_pid()
    if pid:
        try:
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        except OSError:
            pass
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def read_pid():
    """The interpreter's pid: the one process of this sandbox serving."""
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if len(argv) >= 3 and argv[1] == __file__.encode() and argv[2] == b"serve":
            return int(d)
    return None


def client():
    code = run()
    # Done: a late interrupt must not kill us (finalisation restores the
    # default SIGINT handler), nor anything be flushed twice.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    if sys.argv[1:] == ["serve"]:
        serve()
    else:
        client()
