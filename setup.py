"""The one thing ``pyproject.toml`` cannot say: the package list is the packages found under ``src/``
plus ``graphbench.conf``, which lives at the repository root as ``conf/`` (mapped there by
``[tool.setuptools.package-dir]``; see ``conf/__init__.py``), and graphbench's Hydra plugin in the
``hydra_plugins`` namespace package (``src/hydra_plugins/``, no ``__init__.py``: the namespace Hydra
scans for plugins, shared with the other plugins installed). Everything else is in ``pyproject.toml``."""

from setuptools import find_namespace_packages, find_packages, setup

setup(packages=[*find_packages("src"), *find_namespace_packages("src", include=["hydra_plugins.*"]), "graphbench.conf"])
