"""``python <script> ...`` and ``python -m <module> ...`` run in a process forked from a warm interpreter.

A fresh ``python run.py`` spends 6-7 s on a 2-core machine starting the interpreter and importing
torch, Lightning, PyG and Hydra before it reads its first override, and the end-to-end tests start
dozens of them. :func:`run_python` pays that once per test worker: multiprocessing's forkserver (the
standard library's tested utility for this) is a single-threaded interpreter that imports
:data:`PRELOAD` once, and every run is a process forked from it. Each run still has its own process:
its own working directory, environment, ``sys.argv`` and ``sys.path[0]`` as the interpreter sets them,
its own signal handlers and exit code, stdout and stderr on their file descriptors, its children
started the platform's default way, and the interpreter's ending (non-daemon threads joined, then the
``atexit`` hooks); tests/test_warm_python.py compares each with a fresh interpreter. It returns what ``subprocess.run(..., capture_output=True,
text=True)`` returns, so a test reads it the same way.

What a forked run cannot show is kept on real subprocesses: the interpreter's own start-up (the install
tests start console scripts), and runs that are signalled while they train (tests/e2e/test_resume.py,
tests/e2e/test_run_status.py).
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import runpy
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path

#: what the warm interpreter imports once: everything ``run.py`` imports before it reads an override
PRELOAD: list[str] = ["graphbench.main", "torch_geometric", "lightning.pytorch", "hydra", "omegaconf"]

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(PRELOAD)


def _run_as_main(args: Sequence[str], cwd: str, env: Mapping[str, str], stdout: str, stderr: str) -> None:
    """In the forked process: become ``python *args`` run in ``cwd`` with ``env``, output to the two files,
    and end as the interpreter ends."""
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    os.dup2(os.open(stdout, os.O_WRONLY), 1)
    os.dup2(os.open(stderr, os.O_WRONLY), 2)
    # a process started by multiprocessing starts its own children the way it was started; a fresh
    # interpreter starts them the platform's default way (fork on Linux)
    multiprocessing.set_start_method(None, force=True)
    code: object = 0
    try:
        if args[0] == "-m":
            sys.argv = list(args[1:])
            sys.path.insert(0, cwd)  # as python -m does
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(args)
            sys.path.insert(0, str(Path(args[0]).resolve().parent))  # as python <script> does
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as exc:
        code = exc.code
    except BaseException:
        traceback.print_exc()
        code = 1
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    # multiprocessing ends the process with os._exit after joining its children, which skips the
    # interpreter's own ending: first wait for the non-daemon threads (running the hooks registered
    # with threading, e.g. concurrent.futures' and loky's pool shutdown), then run the exit hooks
    threading._shutdown()
    atexit._run_exitfuncs()
    raise SystemExit(code)


def run_python(
    args: Sequence[str],
    cwd: Path | str,
    env: Mapping[str, str],
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
    timeout=timeout)``, forked from the warm interpreter; ``args`` is ``[script, ...]`` or
    ``["-m", module, ...]``."""
    if not args or (args[0] == "-m" and len(args) < 2) or (args[0].startswith("-") and args[0] != "-m"):
        raise ValueError(f"run_python runs a script or -m <module>, got {list(args)}")
    with tempfile.TemporaryDirectory(prefix="warm-python-") as folder:
        out, err = Path(folder) / "stdout", Path(folder) / "stderr"
        out.touch()
        err.touch()
        process = _CONTEXT.Process(target=_run_as_main, args=(list(args), str(cwd), dict(env), str(out), str(err)))
        process.start()
        process.join(timeout)
        command = [sys.executable, *args]
        if process.exitcode is None:
            process.kill()
            process.join()
            raise subprocess.TimeoutExpired(command, timeout, out.read_text(), err.read_text())
        # a run ended by a signal has its negative number, as in subprocess
        return subprocess.CompletedProcess(command, process.exitcode, out.read_text(), err.read_text())
