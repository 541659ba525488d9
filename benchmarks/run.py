"""``python benchmarks/run.py``: the same as ``python -m benchmarks`` from the repository root."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for `import benchmarks`

from benchmarks.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
