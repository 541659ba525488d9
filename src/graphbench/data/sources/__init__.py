"""Dataset sources, one module per family, grouped by task level; see :mod:`graphbench.data.sources.base`."""
