"""Reading raw files: the data root and opt-in downloads (:mod:`~graphbench.data.io.raw_root`,
:mod:`~graphbench.data.io.raw_files`), what a cache was built from
(:mod:`~graphbench.data.io.raw_manifest`), :mod:`~graphbench.data.io.archives`, safe loaders of
pickles (:mod:`~graphbench.data.io.safe_load`)."""
