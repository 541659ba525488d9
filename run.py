"""graphbench entry point in a checkout: ``python run.py [overrides]`` is the ``graphbench`` command
(:mod:`graphbench.__main__`; :mod:`graphbench.main`'s docstring lists its uses and exit codes)."""

from graphbench.__main__ import main

if __name__ == "__main__":
    main()
