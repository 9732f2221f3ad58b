"""The sandbox class agent code commonly has on top of Docker
(execute(code) -> {exit_code, output, error}, network off, a memory limit,
a read-only root, a tmpfs /tmp), on sandrun instead.  No network, the
read-only root and the size-capped /tmp are sandrun's defaults."""
from sandrun import Sandbox


class CodeSandbox:
    def __init__(self, memory="512M", timeout=30):
        self.sandbox = Sandbox(memory=memory, timeout=timeout)  # no allow_hosts: no network

    def execute(self, code: str) -> dict:
        r = self.sandbox.run(code)  # a fresh sandbox per call
        error = r.stderr if r.limit_exceeded is None else "%s\n%s" % (r.stderr, r.message)
        return {"exit_code": r.exit_status, "output": r.stdout, "error": error.strip()}
