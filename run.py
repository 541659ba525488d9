"""graphbench entry point in a checkout: ``python run.py [overrides]`` is the ``graphbench`` command
(:mod:`graphbench.main`, whose docstring lists its uses and exit codes)."""

from graphbench.main import main

if __name__ == "__main__":
    main()
