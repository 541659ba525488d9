"""The ``graphbench`` command and ``python -m graphbench`` (``python run.py`` in a checkout): the run of
:func:`graphbench.main.main`, whose docstring lists its uses and exit codes.

Ctrl-C while the command starts (the imports of torch, Lightning, PyG and Hydra, the composition) ends the
process at once, writing nothing and printing no traceback; the run frame handles it from the moment the
run claims its directory (:mod:`graphbench.run.signals`). So :mod:`graphbench.main` is imported only once
that handler is in place: the console script's own import of its entry point must stay this light module.
"""

from __future__ import annotations

import signal


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    from graphbench.main import main as run_command

    run_command()


if __name__ == "__main__":
    main()
