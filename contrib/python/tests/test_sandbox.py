import os

import pytest

from sandrun import FileChange, Receipt, Sandbox, SandrunError

KERNEL = os.environ.get("SANDRUN_KERNEL") == "1"
SESSIONS = os.environ.get("SANDRUN_SESSIONS", "1") == "1"
needs_sessions = pytest.mark.skipif(not SESSIONS, reason="this sandrun has no sessions (sandbox start) yet")
# The fake sandbox (tests/helpers/fake-sandrun) has no network gateway.
FAKE = os.path.basename(os.environ.get("SANDRUN") or "fake-sandrun") == "fake-sandrun"


def test_run_returns_a_typed_receipt():
    r = Sandbox(timeout=10).run("print(6 * 7)")
    assert isinstance(r, Receipt)
    assert r.ok and r.exit_code == 0 and r.limit_exceeded is None
    assert r.stdout == "42\n" and r.stderr == ""
    assert r.raw["stdout"] == "42\n"


def test_a_failing_run_is_not_ok():
    r = Sandbox().run("import sys; print('bad', file=sys.stderr); sys.exit(3)")
    assert not r.ok and r.exit_code == 3 and r.stderr == "bad\n"


def test_a_limit_is_named():
    r = Sandbox(timeout=1).run("while True: pass")
    assert not r.ok
    assert r.limit_exceeded == "timeout"
    assert r.message


def test_shell_and_exec():
    assert Sandbox().run("echo $((2 + 3))", language="shell").stdout == "5\n"
    assert Sandbox().exec(["sh", "-c", "echo argv"]).stdout == "argv\n"
    assert Sandbox().exec("echo a string is sh -c").stdout == "a string is sh -c\n"
    with pytest.raises(ValueError):
        Sandbox().run("1", language="cobol")


def test_sandruns_message_is_the_exception():
    with pytest.raises(SandrunError) as e:
        Sandbox(memory="bad").run("print(1)")
    assert "--memory" in str(e.value) and e.value.status == 125


def test_a_missing_sandrun_is_an_error():
    with pytest.raises(SandrunError, match="not found"):
        Sandbox(sandrun="/nonexistent/sandrun").run("1")


def test_files_need_a_session():
    with pytest.raises(SandrunError, match="needs a session"):
        Sandbox().files.read("x")


@needs_sessions
def test_a_session_keeps_its_files_and_the_context_manager_stops_it():
    with Sandbox(timeout=10) as sb:
        name = sb.session
        assert name
        sb.files.write("in.txt", "hello\n")
        r = sb.exec("cat in.txt; echo out > out.txt")
        assert r.stdout == "hello\n"
        assert any(f.path.endswith("out.txt") for f in r.files)
        assert all(isinstance(f, FileChange) for f in r.files)
        assert sb.files.read("/work/out.txt") == b"out\n"
        sb.files.write("bin", b"\x00\xff")
        assert sb.files.read("bin") == b"\x00\xff"
    assert sb.session is None
    with pytest.raises(SandrunError):
        Sandbox()._cli(["stop", name])  # gone already


@needs_sessions
def test_the_session_stops_when_the_block_raises():
    sb = Sandbox()
    with pytest.raises(RuntimeError):
        with sb:
            raise RuntimeError("boom")
    assert sb.session is None


@pytest.mark.skipif(not KERNEL, reason="this sandrun has no --kernel python sessions yet")
def test_the_interpreter_state_persists_in_a_session():
    with Sandbox() as sb:
        sb.run("x = 41")
        assert sb.run("print(x + 1)").stdout == "42\n"


@needs_sessions
@pytest.mark.skipif(FAKE, reason="the fake sandbox has no network gateway")
def test_allow_hosts_in_a_session():
    # nothing leaves the sandbox: a name off the list is denied by the gateway
    with Sandbox(timeout=20, allow_hosts=["allowed.test"]) as sb:
        r = sb.exec("printenv HTTPS_PROXY")
        assert r.stdout == "http://127.0.0.1:3128\n"
        assert r.policy["network"] == "gateway" and r.network == []
        r = sb.run("import urllib.request\n"
                   "try:\n"
                   "    urllib.request.urlopen('http://denied.test/', timeout=10)\n"
                   "except OSError as e:\n"
                   "    print(type(e).__name__)")
        assert r.stdout == "HTTPError\n"
        assert [(n["host"], n["decision"]) for n in r.network] == [("denied.test", "denied")]
        assert "network" in r.limits_hit
        assert sb.exec("true").network == []


def test_the_docker_style_class():
    from docker_style import CodeSandbox

    sb = CodeSandbox(memory="128M", timeout=2)
    assert sb.execute("print('hi')") == {"exit_code": 0, "output": "hi\n", "error": ""}
    out = sb.execute("import sys; sys.exit('no')")
    assert out["exit_code"] == 1 and out["error"] == "no"
    out = sb.execute("while True: pass")
    assert out["exit_code"] == 137 and out["error"]


def test_a_signal_is_an_exit_status():
    r = Sandbox(timeout=1).run("while True: pass")  # the timeout ends it with SIGKILL
    assert r.exit_code is None and r.signal == "SIGKILL" and r.exit_status == 137 and not r.ok
