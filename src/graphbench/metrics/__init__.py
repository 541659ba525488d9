"""Task metrics: :mod:`~graphbench.metrics.registry` maps a dataset's ``metric`` name to its
torchmetrics object (one ``MetricSpec`` each, the one table of metric names); the others are the
metrics graphbench defines.

- :mod:`~graphbench.metrics.accuracy`, :mod:`~graphbench.metrics.f1`: binary (multilabel) accuracy and F1 on logits
- :mod:`~graphbench.metrics.weighted_accuracy`: class-balanced accuracy (PATTERN, CLUSTER)
- :mod:`~graphbench.metrics.taskwise`: binary metrics averaged over tasks as OGB's ``Evaluator`` does
- :mod:`~graphbench.metrics.ranking`: exact rank-based binary metrics on raw scores
- :mod:`~graphbench.metrics.hits`, :mod:`~graphbench.metrics.mrr`: link prediction's Hits@K and (filtered) MRR
- :mod:`~graphbench.metrics.log_mse`: the multitask score of PNA's GraphTheoryProp
- :mod:`~graphbench.metrics.mean`: the epoch loss, a weighted mean that keeps a NaN
"""
