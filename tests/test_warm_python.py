"""A run forked from the warm interpreter is what ``python <script>`` / ``python -m <module>`` gives:
the same argv, working directory, environment, ``sys.path[0]``, start method of its own children,
output streams, exit hooks and exit code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.warm_python import run_python

PROBE = """\
import atexit, json, multiprocessing, os, sys
atexit.register(lambda: print("exit hook ran", flush=True))
print(json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "probe": os.environ.get("PROBE"), "path0": sys.path[0],
                  "name": __name__, "start_method": multiprocessing.get_start_method()}))
print("to stderr", file=sys.stderr)
raise SystemExit(int(os.environ["PROBE_CODE"]))
"""


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    package = tmp_path / "probepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(PROBE)
    (tmp_path / "probe.py").write_text(PROBE)
    return tmp_path


@pytest.mark.parametrize("args", [["probe.py", "a", "b=1"], ["-m", "probepkg", "--flag", "x"]], ids=["script", "module"])
@pytest.mark.parametrize("code", [0, 3])
def test_a_forked_run_matches_a_fresh_interpreter(probe: Path, args: list[str], code: int) -> None:
    env = {**os.environ, "PROBE": "seen", "PROBE_CODE": str(code)}
    fresh = subprocess.run([sys.executable, *args], cwd=probe, env=env, capture_output=True, text=True, timeout=60)
    forked = run_python(args, probe, env, timeout=60)
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    assert fresh.returncode == code and fresh.stdout.endswith("exit hook ran\n") and '"probe": "seen"' in fresh.stdout


def test_an_uncaught_exception_exits_1_with_its_traceback(tmp_path: Path) -> None:
    (tmp_path / "fails.py").write_text("1 / 0\n")
    forked = run_python(["fails.py"], tmp_path, os.environ, timeout=60)
    assert forked.returncode == 1 and "Traceback" in forked.stderr and "ZeroDivisionError" in forked.stderr


def test_a_run_past_its_timeout_is_killed(tmp_path: Path) -> None:
    (tmp_path / "sleeps.py").write_text("import time\nprint('started', flush=True)\ntime.sleep(60)\n")
    with pytest.raises(subprocess.TimeoutExpired) as raised:
        run_python(["sleeps.py"], tmp_path, os.environ, timeout=3)
    assert raised.value.output == "started\n"


def test_only_a_script_or_a_module_is_run(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="script or -m <module>"):
        run_python(["-c", "print(1)"], tmp_path, os.environ)


def test_a_pool_left_open_is_shut_down_as_the_interpreter_does(tmp_path: Path) -> None:
    """Its workers are started as a fresh interpreter starts them (they re-import no ``__main__``)."""
    script = "from concurrent.futures import ProcessPoolExecutor\npool = ProcessPoolExecutor(1)\nprint(pool.submit(abs, -2).result())\n"
    (tmp_path / "pool.py").write_text(script)
    forked = run_python(["pool.py"], tmp_path, os.environ, timeout=60)
    assert (forked.returncode, forked.stdout) == (0, "2\n"), forked.stderr


def test_the_exit_hooks_run_after_the_threads_end(tmp_path: Path) -> None:
    script = (
        "import atexit, threading, time\n"
        "atexit.register(print, 'exit hook')\n"
        "threading.Thread(target=lambda: (time.sleep(0.5), print('thread done', flush=True))).start()\n"
    )
    (tmp_path / "thread.py").write_text(script)
    fresh = subprocess.run([sys.executable, "thread.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    forked = run_python(["thread.py"], tmp_path, os.environ, timeout=60)
    assert forked.stdout == fresh.stdout == "thread done\nexit hook\n"


def test_an_exit_with_a_message_prints_it_and_exits_1(tmp_path: Path) -> None:
    (tmp_path / "says.py").write_text("import atexit\natexit.register(print, 'hook')\nraise SystemExit('bad input')\n")
    fresh = subprocess.run([sys.executable, "says.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    forked = run_python(["says.py"], tmp_path, os.environ, timeout=60)
    assert (
        (forked.returncode, forked.stdout, forked.stderr)
        == (fresh.returncode, fresh.stdout, fresh.stderr)
        == (1, "hook\n", "bad input\n")
    )
