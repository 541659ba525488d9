"""The one thing ``pyproject.toml`` cannot say: the package list is the packages found under ``src/``
plus ``graphbench.conf``, which lives at the repository root as ``conf/`` (mapped there by
``[tool.setuptools.package-dir]``; see ``conf/__init__.py``). Everything else is in ``pyproject.toml``."""

from setuptools import find_packages, setup

setup(packages=[*find_packages("src"), "graphbench.conf"])
