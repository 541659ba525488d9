"""The collated in-memory store of a dataset (:mod:`~graphbench.data.store.graph_store`), its collation
and bulk batching (:mod:`~graphbench.data.store.collate`, :mod:`~graphbench.data.store.batching`), the
processed-data cache (:mod:`~graphbench.data.store.cache`), the loaders
(:mod:`~graphbench.data.store.loader`, :mod:`~graphbench.data.store.full_batch`), batches gathered on
the device (:mod:`~graphbench.data.store.device_store`) or padded to fixed shapes
(:mod:`~graphbench.data.store.padding`), DDP shards (:mod:`~graphbench.data.store.sharding`), and the
encodings of a whole store (:mod:`~graphbench.data.store.encodings`)."""
