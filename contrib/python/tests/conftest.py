"""The tests drive the sandrun CLI named by $SANDRUN (tests/integration/
python.bats sets it: the real sandrun, or tests/helpers/fake-sandrun, a
stand-in that speaks the CLI without isolating anything)."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "examples")]
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


@pytest.fixture(autouse=True)
def sandrun_bin(monkeypatch):
    path = os.environ.get("SANDRUN") or os.path.join(REPO, "tests", "helpers", "fake-sandrun")
    monkeypatch.setenv("SANDRUN", path)
    return path
