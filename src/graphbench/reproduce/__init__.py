"""Reproduce a paper's table in one command: ``graphbench-reproduce NAME`` (``python -m graphbench.reproduce NAME``).

:mod:`~graphbench.reproduce.spec` reads the table file ``conf/reproduce/NAME.yaml`` (cells as Hydra
multiruns, the paper's values and sources, layout, cost), :mod:`~graphbench.reproduce.plan` turns its
cells into ``graphbench -m`` commands, :mod:`~graphbench.reproduce.runner` runs them and resumes an
earlier invocation, :mod:`~graphbench.reproduce.table` compares ours with the paper's and renders
Markdown and CSV, :mod:`~graphbench.reproduce.plot` draws it. See docs/reproduce.md.

The command line is ``__main__``.
"""
