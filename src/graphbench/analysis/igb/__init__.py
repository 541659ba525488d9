"""IGB's evaluation protocol (Li et al., "Rethinking the Setting of Semi-supervised Learning on Graphs",
IJCAI 2022): i.i.d. random-walk subgraphs with KL acceptance (:mod:`.sampler`, :mod:`.walk`,
:mod:`.divergence`), full-batch fits and the grid search (:mod:`.fit`), the select-then-retrain protocol on
one graph or on i.i.d. subgraphs (:mod:`.protocol`),
the ValidUtil over-tuning probe (:mod:`.validutil`) and rank stability across seeds on the public split
and on i.i.d. subgraphs (:mod:`.ranks`, ``python -m graphbench.analysis igb-ranks``)."""
