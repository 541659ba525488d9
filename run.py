"""graphbench entry point in a checkout: ``python run.py [overrides]`` is the ``graphbench`` command
(:mod:`graphbench.main`, whose docstring lists its uses and exit codes)."""

import signal

if __name__ == "__main__":
    # Ctrl-C while it starts (imports, composition) ends the process at once, writing nothing; the run
    # frame handles it from the moment the run claims its directory (graphbench.run.signals)
    signal.signal(signal.SIGINT, signal.SIG_DFL)

from graphbench.main import main

if __name__ == "__main__":
    main()
