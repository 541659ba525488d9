"""graphbench's configuration, shipped as the package ``graphbench.conf``.

This folder stays at the repository root, where the docs and tests name it (``conf/...``); the
package build maps it to ``graphbench.conf`` (``package-dir`` in ``pyproject.toml``), so that an
installed ``graphbench`` composes from it through Hydra's ``pkg://graphbench.conf`` search path
(:mod:`graphbench.main`). Hydra's package config source needs this ``__init__.py``; the YAML files
are the package's data.
"""
