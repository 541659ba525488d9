"""Where the tests find the repository's configs and the real data root."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"
SHARED_DATA = Path(os.environ.get("GRAPHBENCH_SHARED_DATA", REPO.parent / "shared" / "data"))
