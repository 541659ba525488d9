"""graphbench's configuration, shipped as the package ``graphbench.conf``.

This folder stays at the repository root, where the docs and tests name it (``conf/...``); the
package build maps it to ``graphbench.conf`` (``package-dir`` in ``pyproject.toml``), so that an
installed ``graphbench`` composes from it through Hydra's ``pkg://graphbench.conf`` search path
(:mod:`graphbench.main`). Hydra's package config source needs this ``__init__.py``; the YAML files
are the package's data.
"""

from pathlib import Path

#: the folder of ``config.yaml`` and the config groups: ``conf/`` of the checkout (editable install) or
#: ``graphbench/conf`` in site-packages (wheel); what the command-line tools compose from by default
CONFIG_DIR: Path = Path(__file__).resolve().parent
