"""Everything between raw files and batches.

- :mod:`graphbench.data.sources`: one module per dataset family, pure data (no Lightning): facts,
  raw files -> collated store + split indices (``sources/{graph,node,link}/``).
- :mod:`graphbench.data.datamodules`: one LightningDataModule per task level, which owns the
  cache, positional encodings, feature normalization and loaders.
- :mod:`graphbench.data.store`: the collated store, bulk batching and collation, the cache.
- :mod:`graphbench.data.io`: the data root, raw-file checks and downloads, safe loaders.
- :mod:`graphbench.data.splits`: folds, split index arrays, random node splits.

The facts a dataset hands the model and the metrics (:class:`~graphbench.data.info.DatasetInfo`) live in
:mod:`graphbench.data.info`, outside this package.

- :mod:`graphbench.data.samplers`: the mini-batch samplers of one-graph tasks (``conf/sampler/``).
"""
