"""Dataset sources, one module per family, grouped by task level (:mod:`graphbench.data.sources.graph`,
:mod:`graphbench.data.sources.node`, :mod:`graphbench.data.sources.link`); the contract is
:mod:`graphbench.data.sources.base`. Molecules shared by several families:
:mod:`~graphbench.data.sources.molecules` (SMILES -> OGB's features) and
:mod:`~graphbench.data.sources.mol_pickle` (RDKit's binary molecules)."""
