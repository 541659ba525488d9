"""Transforms of a dataset's graphs, applied once and cached by the DataModule
(:func:`graphbench.build.data.dataset_transform` composes the configured ones).

- :mod:`~graphbench.transforms.lap_pe`, :mod:`~graphbench.transforms.rwse`: Laplacian eigenvector and
  random-walk positional encodings (:mod:`~graphbench.transforms.walk_kernels`: RWSE's compiled kernels)
- :mod:`~graphbench.transforms.precompute`: the encodings of a whole dataset, batched
- :mod:`~graphbench.transforms.channelwise`: channel-wise feature standardization
- :mod:`~graphbench.transforms.rewiring`: feature-similarity rewiring (NCMemo)
"""
