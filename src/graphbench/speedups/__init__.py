r"""Speed-ups: the one room of graphbench that holds CPU-specific kernels and touches other packages'
private names for speed (the few other touches, where nothing public does the job, are listed with
their reasons in tests/test_private_names.py). The networks are built from plain building blocks (``torch.nn.Linear``,
``torch.nn.Dropout``, PyG's ``Linear``); this package swaps faster kernels in, and nothing else
imports them. One switch, ``speedups=auto|off`` (``conf/speedups/``), decides:

* :func:`apply` (the network, from :func:`graphbench.build.model.network_builder`): every ``nn.Linear``
  and PyG ``Linear`` computes its product on oneDNN (:mod:`~graphbench.speedups.linear`) and every
  ``nn.Dropout`` draws torch's own CPU masks with a compiled kernel
  (:mod:`~graphbench.speedups.dropout`, :mod:`~graphbench.speedups.cpu_bernoulli`). Only the class
  of each module changes, to a subclass that overrides ``forward`` alone: parameters, their names
  and ``state_dict`` keys stay those of the plain network, so checkpoints load either way.
  The kernels take float32 CPU tensors outside ``torch.func`` and ``torch.compile`` and give
  everything else to torch's own ops; the losses equal those of the plain network (dropout bit for
  bit, the products up to float summation order; ``tests/speedups/test_seam.py``).
* :func:`optimizer` (the ``optimizer`` group's node, from :func:`graphbench.build.task_module.build_optimizer`):
  Adam and AdamW update every parameter in one fused kernel (:mod:`~graphbench.speedups.fused_optimizer`;
  parameters equal to the ``foreach`` update's up to float rounding), except under mixed precision.
* :func:`run_scope` (the ``train`` run): Lightning's ``self.log`` without its per-call device walk
  (:mod:`~graphbench.speedups.result_moves`), a patch of Lightning's private class made only for the
  length of the run and only on tested Lightning releases; :func:`profiler`, Lightning's
  pass-through profiler without a generator per hook call
  (:mod:`~graphbench.speedups.quiet_profiler`).
* Always on, since they change no value and only preprocessing runs them: the data builders pause
  the garbage collector (:mod:`~graphbench.speedups.gc_pause`) and NumPy's huge-page advice
  (:mod:`~graphbench.speedups.hugepages`, a private NumPy setter) around bulk array building.

:func:`compile_network` (``model.compile=true``) compiles the network's forward with
``torch.compile(dynamic=True)``, or, for batches padded to buckets (``dataset.pad_to=buckets``), with
``dynamic=False`` and ``fullgraph=True``, in ``model.compile_mode`` (:data:`COMPILE_MODES`;
``reduce-overhead``: CUDA graphs on a GPU); the kernels step aside while it traces.

These five functions live in :mod:`~graphbench.speedups.seam`; whether a tensor is inside a ``torch.func``
transform: :mod:`~graphbench.speedups.functorch`.
"""

from graphbench.speedups.seam import CHOICES, COMPILE_MODES, apply, compile_network, optimizer, profiler, run_scope

__all__ = ["CHOICES", "COMPILE_MODES", "apply", "compile_network", "optimizer", "profiler", "run_scope"]
