"""Networks and the LightningModules that train them.

- :mod:`~graphbench.modules.network`: the GNN, encoders (+ PE) -> message-passing stack -> pooling -> head
- :mod:`~graphbench.modules.layers`: the message-passing layers, one module each, and their written
  contract (:mod:`~graphbench.modules.layers.contract`)
- :mod:`~graphbench.modules.encoders`, :mod:`~graphbench.modules.pe_encoders`: raw features and
  positional encodings -> hidden vectors
- :mod:`~graphbench.modules.heads`: prediction heads; :mod:`~graphbench.modules.norms`: normalizations;
  :mod:`~graphbench.modules.activations`: activations by name
- :mod:`~graphbench.modules.propagation`: message passing with the per-batch work done once
- :mod:`~graphbench.modules.budget`: the width solved under a parameter budget
- :mod:`~graphbench.modules.task_module`, :mod:`~graphbench.modules.link_task_module`: the
  LightningModules of graph/node and link tasks; :mod:`~graphbench.modules.losses`,
  :mod:`~graphbench.modules.schedulers`: their losses and learning-rate schedules
"""
