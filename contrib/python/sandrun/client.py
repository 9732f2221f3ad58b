"""The Sandbox class: the sandrun CLI, called with subprocess."""

import json
import os
import shutil
import signal as _signal
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Union

#: sandrun's exit status when it could not run the command itself
SANDRUN_FAILED = 125


class SandrunError(Exception):
    """sandrun could not do what was asked; ``str()`` is sandrun's message."""

    def __init__(self, message: str, status: Optional[int] = None, stderr: str = ""):
        super().__init__(message)
        self.message = message
        self.status = status
        self.stderr = stderr


@dataclass
class FileChange:
    """A file an execution created, modified or deleted under /work."""

    path: str
    change: str
    size: Optional[int] = None
    sha256: Optional[str] = None


@dataclass
class Receipt:
    """The receipt of one execution (``contrib/sandbox/receipt.schema.json``).

    ``raw`` holds the whole document, including fields this class does not
    name."""

    exit_code: Optional[int]
    stdout: str
    stderr: str
    signal: Any = None
    limit_exceeded: Optional[str] = None
    limits_hit: List[str] = field(default_factory=list)
    message: Optional[str] = None
    duration_ms: Optional[float] = None
    cpu_ms: Any = None
    peak_memory_bytes: Optional[int] = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    files: List[FileChange] = field(default_factory=list)
    session: Optional[str] = None
    id: Optional[str] = None
    command: List[str] = field(default_factory=list)
    network: List[Dict[str, Any]] = field(default_factory=list)
    policy: Dict[str, Any] = field(default_factory=dict)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        """The command exited 0 and no limit stopped it."""
        return self.exit_code == 0 and self.limit_exceeded is None

    @property
    def exit_status(self) -> int:
        """The shell's view: the exit code, or 128+N when signal N ended it."""
        if self.exit_code is not None:
            return self.exit_code
        try:
            return 128 + int(_signal.Signals[self.signal])
        except (KeyError, TypeError):
            return 128 + _signal.SIGKILL

    @classmethod
    def from_json(cls, doc: Dict[str, Any]) -> "Receipt":
        names = cls.__dataclass_fields__.keys() - {"files", "raw"}
        kw = {k: doc[k] for k in names if doc.get(k) is not None}
        kw["exit_code"] = doc.get("exit_code")
        kw.setdefault("stdout", "")
        kw.setdefault("stderr", "")
        files = [FileChange(**{k: f.get(k) for k in ("path", "change", "size", "sha256")})
                 for f in doc.get("files") or []]
        return cls(files=files, raw=doc, **kw)


def _duration(seconds: Union[int, float, str]) -> str:
    if isinstance(seconds, str):
        return seconds
    ms = int(round(float(seconds) * 1000))
    if ms <= 0:
        raise ValueError("a timeout must be positive, got %r" % (seconds,))
    return "%ds" % (ms // 1000) if ms % 1000 == 0 else "%dms" % ms


class Files:
    """Files of a session: ``read(path) -> bytes``, ``write(path, data)``.

    Paths are under /work (relative ones are taken from /work) or /tmp."""

    def __init__(self, sandbox: "Sandbox"):
        self._sb = sandbox

    @staticmethod
    def _path(path: str) -> str:
        return path if path.startswith("/") else "/work/" + path

    def read(self, path: str) -> bytes:
        name = self._sb._need_session("files.read")
        with tempfile.TemporaryDirectory(prefix="sandrun-py-") as tmp:
            dst = os.path.join(tmp, "file")
            self._sb._cli(["cp", "%s:%s" % (name, self._path(path)), dst])
            with open(dst, "rb") as f:
                return f.read()

    def write(self, path: str, data: Union[bytes, str]) -> None:
        name = self._sb._need_session("files.write")
        if isinstance(data, str):
            data = data.encode()
        with tempfile.TemporaryDirectory(prefix="sandrun-py-") as tmp:
            src = os.path.join(tmp, "file")
            with open(src, "wb") as f:
                f.write(data)
            self._sb._cli(["cp", name, src, self._path(path)])


class Sandbox:
    """A sandrun sandbox.

    Outside a ``with`` block every ``run``/``exec`` is a fresh one-shot
    sandbox.  Inside one (or after ``start()``) they run in one session
    whose /work, /tmp, processes and Python interpreter persist until
    ``stop()``, which the ``with`` block calls however it ends.

    ``timeout`` (seconds), ``memory`` ("256M"), ``allow_hosts`` (names the
    sandbox may reach; none: no network) and the other limits become the
    sandbox's options; ``extra_args`` passes any other sandbox option."""

    def __init__(self, timeout: Union[int, float, str, None] = None, memory: Optional[str] = None,
                 allow_hosts: Sequence[str] = (), *, pids: Optional[int] = None,
                 cpus: Optional[float] = None, disk: Optional[str] = None,
                 output_limit: Optional[str] = None, rootfs: Optional[str] = None,
                 env: Optional[Dict[str, str]] = None, kernel: Optional[str] = "python",
                 sandrun: Optional[str] = None, root: Optional[str] = None,
                 extra_args: Sequence[str] = ()):
        self.timeout = timeout
        self.sandrun = sandrun or os.environ.get("SANDRUN") or shutil.which("sandrun") or "sandrun"
        self.root = root
        self.kernel = kernel
        self.session: Optional[str] = None
        self.files = Files(self)
        opts: List[str] = []
        for flag, value in (("--memory", memory), ("--pids", pids), ("--cpus", cpus),
                            ("--disk", disk), ("--output-limit", output_limit),
                            ("--rootfs", rootfs)):
            if value is not None:
                opts += [flag, str(value)]
        for host in allow_hosts:
            opts += ["--allow-host", host]
        for k, v in (env or {}).items():
            opts += ["--env", "%s=%s" % (k, v)]
        self._opts = opts + list(extra_args)

    # --- the CLI ---
    def _cli(self, args: List[str], timeout: Optional[float] = None) -> subprocess.CompletedProcess:
        argv = [self.sandrun] + (["--root", self.root] if self.root else []) + ["sandbox"] + args
        try:
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        except FileNotFoundError:
            raise SandrunError("sandrun not found: %s (install it or pass sandrun=PATH)" % self.sandrun)
        if p.returncode != 0 and args[0] in ("start", "stop", "cp"):
            raise self._error(p)
        return p

    @staticmethod
    def _error(p: subprocess.CompletedProcess) -> SandrunError:
        err = p.stderr.decode("utf-8", "replace").strip()
        line = err.splitlines()[-1] if err else "sandrun exited with status %d" % p.returncode
        return SandrunError(line, p.returncode, err)

    def _receipt(self, args: List[str]) -> Receipt:
        p = self._cli(args)
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            doc = None
        if not isinstance(doc, dict) or (p.returncode == SANDRUN_FAILED and "exit_code" not in doc):
            raise self._error(p)
        return Receipt.from_json(doc)

    def _timeout(self, timeout) -> List[str]:
        t = timeout if timeout is not None else self.timeout
        return ["--timeout", _duration(t)] if t is not None else []

    def _need_session(self, what: str) -> str:
        if self.session is None:
            raise SandrunError("%s needs a session: use the Sandbox in a with block, or start() it" % what)
        return self.session

    # --- executions ---
    def run(self, code: str, language: str = "python", timeout=None) -> Receipt:
        """Run Python (or, with ``language="shell"``, sh) code; its receipt.

        In a session, Python code runs in the session's interpreter, so
        variables and imports persist from one run to the next."""
        if language not in ("python", "shell"):
            raise ValueError("language must be python or shell, got %r" % (language,))
        if self.session is not None and language == "python" and self.kernel == "python":
            return self._receipt(["exec", self.session] + self._timeout(timeout)
                                 + ["--receipt", "-", "--code", code])
        cmd = ["python3", "-c", code] if language == "python" else ["sh", "-c", code]
        return self.exec(cmd, timeout=timeout)

    def exec(self, command: Union[str, Sequence[str]], timeout=None) -> Receipt:
        """Run a command (a list, or a string for sh -c); its receipt."""
        cmd = ["sh", "-c", command] if isinstance(command, str) else list(command)
        if self.session is not None:
            return self._receipt(["exec", self.session] + self._timeout(timeout)
                                 + ["--receipt", "-", "--"] + cmd)
        return self._receipt(self._opts + self._timeout(timeout) + ["--receipt", "-", "--"] + cmd)

    # --- the session ---
    def start(self) -> "Sandbox":
        if self.session is None:
            name = "py-%d-%s" % (os.getpid(), uuid.uuid4().hex[:8])
            kernel = ["--kernel", self.kernel] if self.kernel else []
            self._cli(["start", "--name", name] + self._opts + kernel)
            self.session = name
        return self

    def stop(self) -> None:
        if self.session is not None:
            name, self.session = self.session, None
            self._cli(["stop", name])

    def __enter__(self) -> "Sandbox":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return "Sandbox(session=%r, options=%r)" % (self.session, self._opts)
