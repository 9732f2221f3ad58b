"""Run untrusted code in sandrun sandboxes.

Standard library only: every call runs the ``sandrun`` command-line tool
(``sandrun sandbox`` for one-shot runs, ``sandbox start/exec/cp/stop`` for a
session) and reads its receipt.

    from sandrun import Sandbox

    with Sandbox(timeout=10, memory="256M") as sb:   # a session
        sb.run("x = 41")
        print(sb.run("print(x + 1)").stdout)          # 42

    receipt = Sandbox().run("print(1)")               # one-shot, no session
"""

from .client import FileChange, Files, Receipt, Sandbox, SandrunError

__all__ = ["Sandbox", "Receipt", "FileChange", "Files", "SandrunError"]
