r"""Laplacian eigenvector positional encoding (LapPE)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import cache, partial
from typing import NamedTuple

import numba
import numpy as np
import scipy.linalg
import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.transforms import BaseTransform

from graphbench.run.processes import map_chunks, usable_cores
from graphbench.transforms.precompute import CollatedGraphs, attach, num_nodes


class LapPE(BaseTransform):
    r"""Laplacian eigenvector positional encoding from `"Benchmarking Graph Neural
    Networks" <https://arxiv.org/abs/2003.00982>`_ (Dwivedi et al., 2020).

    With the symmetric adjacency :math:`A` (self-loops removed, :math:`A_{ij} =
    \max(A_{ij}, A_{ji})` so directed input is read as undirected, parallel edges
    summed, ``data.edge_weight`` used when present), degrees :math:`d_i = \sum_j A_{ij}`
    and :math:`d_i^{-1/2} := 0` for isolated nodes, the symmetric normalized Laplacian

    .. math::
        L = I - D^{-1/2} A D^{-1/2} = U \Lambda U^\top,
        \qquad 0 \le \lambda_1 \le \lambda_2 \le \dots \le \lambda_N \le 2

    is built by a compiled loop and diagonalised densely in float64 (cast to float32), computing
    only the eigenpairs it keeps: LAPACK's ``dsyevr``, called as :func:`scipy.linalg.eigh` with
    ``subset_by_index`` calls it (tridiagonal reduction, bisection for the wanted eigenvalues, inverse
    iteration for their vectors), about twice as fast as a full ``torch.linalg.eigh`` on a molecule.
    The eigenvalues reported are the Rayleigh quotients of the vectors (see :data:`BISECTION_TOL`).
    An isolated node is thus its own eigenvector with eigenvalue 1 (as in PyG's
    :func:`~torch_geometric.utils.get_laplacian`); :math:`\lambda_1 = 0` unless the
    graph has no edges.

    ``laplacian="combinatorial"`` diagonalises :math:`L = D - A` instead (GraphGPS's
    ``laplacian_norm: none``, the LRGB setting of toenshoff/LRGB ``configs/LRGB-tuned``), with
    eigenvalues in :math:`[0, 2 d_{max}]`; an isolated node then has eigenvalue 0.

    **Convention: the trivial eigenvector is dropped** (Dwivedi et al. 2020 and PyG's
    :class:`~torch_geometric.transforms.AddLaplacianEigenvectorPE`; GraphGPS instead
    keeps it). Node :math:`i` gets :math:`(u_2(i), \dots, u_{k+1}(i))`; only the first
    (smallest) eigenpair is dropped, so a graph with :math:`c` components keeps
    :math:`c - 1` further zero eigenvalues, whose vectors are then an arbitrary
    :math:`(c-1)`-dimensional subspace of the null space (as in PyG). ``keep_trivial=True`` keeps it:
    node :math:`i` gets :math:`(u_1(i), \dots, u_k(i))`, GraphGPS's ``max_freqs: k`` (its
    ``get_lap_decomp_stats`` takes the :math:`k` smallest eigenpairs).

    **Padding:** when fewer than :math:`k` eigenpairs are kept (:math:`N - 1 < k`, or :math:`N < k`
    with ``keep_trivial``) the missing columns of
    ``lap_pe`` are 0 and those of ``lap_eigval`` are ``NaN`` (0 is a genuine eigenvalue,
    so NaN marks padding unambiguously; encoders mask it).

    **Signs:** each eigenvector is multiplied by the sign of its largest-magnitude
    entry (first index among near-ties), so the output is deterministic and usually
    independent of the LAPACK path; within a repeated eigenvalue the basis remains an
    arbitrary rotation. Encoders should still flip signs randomly in training.

    Adds ``data[eigen_attr]`` (float32 ``[N, k]``) and ``data[eigval_attr]`` (float32
    ``[N, k]``: the eigenvalue of column :math:`j` repeated on every node, so it batches
    node-wise). SciPy's LAPACK calls hold the GIL, so :meth:`transform_many` and
    :meth:`transform_collated` spread chunks of graphs over forked processes
    (:func:`graphbench.run.processes.map_chunks`).

    Args:
        k (int): Number of eigenvectors (non-trivial ones unless ``keep_trivial``).
        eigen_attr (str): Attribute for the eigenvectors. (default: ``"lap_pe"``)
        eigval_attr (str): Attribute for the eigenvalues. (default: ``"lap_eigval"``)
        laplacian (str): ``"sym"`` (:math:`I - D^{-1/2} A D^{-1/2}`) or ``"combinatorial"``
            (:math:`D - A`). (default: ``"sym"``)
        keep_trivial (bool): Keep the first (smallest) eigenpair. (default: ``False``)
    """

    LAPLACIANS: tuple[str, ...] = ("sym", "combinatorial")

    #: Largest graph handled (the eigendecomposition is dense, :math:`O(N^3)`).
    MAX_NODES: int = 10_000
    #: Fewer graphs than this are encoded in this process: forking would cost more than it saves.
    MIN_GRAPHS_TO_FORK: int = 256

    def __init__(
        self,
        k: int,
        eigen_attr: str = "lap_pe",
        eigval_attr: str = "lap_eigval",
        laplacian: str = "sym",
        keep_trivial: bool = False,
    ) -> None:
        if k < 1:
            raise ValueError(f"LapPE needs k >= 1 eigenvectors, got k={k}")
        if laplacian not in self.LAPLACIANS:
            raise ValueError(f"unknown LapPE laplacian {laplacian!r}; valid: {list(self.LAPLACIANS)}")
        self.k = k
        self.laplacian = laplacian
        self.keep_trivial = keep_trivial
        self.eigen_attr = eigen_attr
        self.eigval_attr = eigval_attr

    def forward(self, data: Data) -> Data:
        (problem,) = self._problems([data])
        pairs = laplacian_eigenpairs(problem, self.k, normalized=self.laplacian == "sym", keep_trivial=self.keep_trivial)
        for name, value in self._attrs(data, *pairs).items():
            data[name] = value
        return data

    def transform_many(self, data_list: Sequence[Data], num_workers: int | None = None) -> list[Data]:
        r"""Batched :meth:`forward` over many graphs (returns shallow copies) on ``num_workers``
        processes (default: every usable core; in this process below ``MIN_GRAPHS_TO_FORK``
        graphs)."""
        pairs = self._solve(self._problems(data_list), num_workers)
        return attach(data_list, [self._attrs(data, vecs, vals) for data, (vecs, vals) in zip(data_list, pairs)])

    def transform_collated(self, graphs: CollatedGraphs, num_workers: int | None = None) -> dict[str, Tensor]:
        r"""The encodings of a whole collated dataset: ``{eigen_attr: [N, k], eigval_attr: [N, k]}``,
        one row per node of the concatenation, equal bit for bit to :meth:`transform_many` (tested);
        the graphs' edges reach the worker processes as slices of the concatenated arrays."""
        ends = graphs.edge_index.detach().cpu().numpy()
        weight = None if graphs.edge_weight is None else graphs.edge_weight.detach().cpu().double().numpy().reshape(-1)
        nodes, edges = graphs.node_ptr.tolist(), graphs.edge_ptr.tolist()
        problems = []
        for b in range(graphs.num_graphs):
            n, first, last = nodes[b + 1] - nodes[b], edges[b], edges[b + 1]
            self._check_size(n)
            problems.append(LaplacianProblem(n, ends[:, first:last], None if weight is None else weight[first:last]))
        # a chunk's rows come back as one pair of arrays, not one per graph to unpickle and gather
        parts = self._solve(problems, num_workers, _stacked_eigenpairs_of_chunk)
        vecs = np.concatenate([np.zeros((0, self.k), np.float32), *(v for v, _ in parts)])
        vals = np.concatenate([np.zeros((0, self.k), np.float32), *(v for _, v in parts)])
        return {self.eigen_attr: torch.from_numpy(vecs), self.eigval_attr: torch.from_numpy(vals)}

    def processes_for(self, num_graphs: int, num_workers: int | None = None) -> int:
        """How many processes :meth:`transform_many` uses for ``num_graphs`` graphs (1: this one)."""
        return 1 if num_graphs < self.MIN_GRAPHS_TO_FORK else num_workers or usable_cores()

    def _solve(
        self, problems: list[LaplacianProblem], num_workers: int | None, chunk_fn: ChunkFn | None = None
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """``chunk_fn`` (default: one eigenpair per graph) over chunks of ``problems``, its lists
        joined in order."""
        workers = self.processes_for(len(problems), num_workers)
        # 16 chunks per process: the last to finish idles at most a sixteenth of its share
        size = max(1, -(-len(problems) // (workers * 16)))
        chunks = [problems[i : i + size] for i in range(0, len(problems), size)]
        fn = partial(
            chunk_fn or _eigenpairs_of_chunk, k=self.k, normalized=self.laplacian == "sym", keep_trivial=self.keep_trivial
        )
        return [p for part in map_chunks(fn, chunks, workers) for p in part]

    def _check_size(self, n: int) -> None:
        if n > self.MAX_NODES:
            raise ValueError(
                f"LapPE computes a dense eigendecomposition; a graph has {n} nodes "
                f"> LapPE.MAX_NODES={self.MAX_NODES}. Use it on graph-level datasets "
                f"or choose pe=none/rwse for large graphs."
            )

    def _problems(self, data_list: Sequence[Data]) -> list[LaplacianProblem]:
        problems = []
        for data in data_list:
            n = num_nodes(data)
            self._check_size(n)
            edge_index, weight = data.edge_index, data.get("edge_weight")
            problems.append(
                LaplacianProblem(
                    n,
                    np.zeros((2, 0), np.int64) if edge_index is None else edge_index.detach().cpu().numpy(),
                    None if weight is None else weight.detach().cpu().double().numpy().reshape(-1),
                )
            )
        return problems

    def _attrs(self, data: Data, vecs: np.ndarray, vals: np.ndarray) -> dict[str, Tensor]:
        attrs = {self.eigen_attr: torch.from_numpy(vecs), self.eigval_attr: torch.from_numpy(vals)}
        device = data.edge_index.device if data.edge_index is not None else torch.device("cpu")
        return attrs if device.type == "cpu" else {name: value.to(device) for name, value in attrs.items()}

    def __repr__(self) -> str:
        # repr names every argument: datamodules key their PE caches on it
        return (
            f"{self.__class__.__name__}(k={self.k}, eigen_attr={self.eigen_attr!r}, eigval_attr={self.eigval_attr!r}, "
            f"laplacian={self.laplacian!r}, keep_trivial={self.keep_trivial})"
        )


class LaplacianProblem(NamedTuple):
    """One graph's Laplacian, as plain arrays for a worker process."""

    num_nodes: int
    edge_index: np.ndarray  # [2, E] int64
    edge_weight: np.ndarray | None  # [E] float64, None for 1


#: Absolute accuracy of dsyevr's bisection for the eigenvalues (DSTEBZ's ABSTOL; 0 is full float64
#: accuracy). 1e-9 instead of 0 takes a sixth off the eigendecomposition of a Peptides-func graph. The
#: eigenvectors come from inverse iteration (DSTEIN) as before, and the eigenvalues reported are their
#: Rayleigh quotients, whose error is quadratic in the vectors' (within 4e-15 of LAPACK's full-accuracy
#: values on 400 Peptides-func graphs; the tests check float32 precision where bisection alone misses it).
BISECTION_TOL: float = 1e-9


def laplacian_eigenpairs(
    problem: LaplacianProblem,
    k: int,
    scratch: np.ndarray | None = None,
    normalized: bool = True,
    keep_trivial: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Eigenpairs 2..k+1 (1..k with ``keep_trivial``) of one graph's :math:`L_{sym}` (with ``normalized``,
    else of :math:`D - A`): float32 ``vecs`` ``[n, k]`` (0-padded)
    and ``vals`` ``[n, k]`` (each row the k eigenvalues, NaN-padded), following the conventions
    documented in :class:`LapPE`. ``scratch`` (float64, at least ``n * n``) holds the dense Laplacian;
    a buffer reused over many graphs spares each a fresh allocation whose pages the kernel must fault
    in (on Peptides-func, a tenth of a graph's time)."""
    n = problem.num_nodes
    row, col = problem.edge_index
    weight = np.ones(row.size) if problem.edge_weight is None else problem.edge_weight
    if scratch is None or scratch.size < n * n:
        scratch = np.empty(n * n)
    lap, diag, first, second, entry = _laplacian(n, row, col, weight, scratch[: n * n].reshape(n, n), normalized)
    skip = 0 if keep_trivial else 1
    kk = min(k, n - skip)
    if kk <= 0:
        return _encodings(np.zeros((n, 0)), diag, first, second, entry, k)
    lwork, liwork = _dsyevr_workspace(n)
    # LAPACK's dsyevr as scipy.linalg.eigh(subset_by_index=[1, kk], driver="evr") calls it, less the
    # wrapper's checks and its workspace query on every graph; lap.T is lap, already in the column-major
    # order LAPACK reads, so nothing is copied
    _, vectors, found, _, info = _DSYEVR(
        lap.T,
        compute_v=1,
        range="I",
        il=1 + skip,
        iu=kk + skip,
        lower=1,
        overwrite_a=1,
        abstol=BISECTION_TOL,
        lwork=lwork,
        liwork=liwork,
    )
    if info != 0 or found != kk:
        raise np.linalg.LinAlgError(f"LAPACK dsyevr failed on a graph of {n} nodes (info={info}, {found} of {kk} eigenpairs)")
    return _encodings(vectors[:, :kk], diag, first, second, entry, k)


_DSYEVR, _DSYEVR_LWORK = scipy.linalg.get_lapack_funcs(("syevr", "syevr_lwork"), dtype=np.float64)


@cache
def _dsyevr_workspace(n: int) -> tuple[int, int]:
    """dsyevr's optimal ``lwork`` and ``liwork`` for order ``n`` (LAPACK's workspace query)."""
    work, iwork, info = _DSYEVR_LWORK(n, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"LAPACK's dsyevr workspace query failed for order {n} (info={info})")
    return math.ceil(work), int(iwork)


@numba.njit(cache=True, nogil=True)
def _laplacian(n, row, col, weight, lap, normalized):
    r""":math:`L = I - D^{-1/2} A D^{-1/2}` (``normalized``) or :math:`L = D - A` densely, with :math:`A_{ij} = \max(W_{ij}, W_{ji})` where
    :math:`W` sums the weights of the edges :math:`i \to j`, self-loops dropped, written into ``lap``
    (``[n, n]``); also its diagonal and its off-diagonal entries once per node pair:
    ``(lap, diag, first, second, entry)`` with ``first < second``.

    Built from the edges sorted by node pair, so the work is :math:`O(E \log E)` besides zeroing the
    dense matrix (on a molecule, a dense pass per step cost more than the sort)."""
    keep = row != col
    a = np.minimum(row, col)[keep]
    b = np.maximum(row, col)[keep]
    forward = (row < col)[keep]
    w = weight[keep]
    order = np.argsort(a * n + b, kind="mergesort")
    first = np.empty(order.size, np.int64)
    second = np.empty(order.size, np.int64)
    entry = np.empty(order.size)
    degree = np.zeros(n)
    pairs = 0
    e = 0
    while e < order.size:
        i, j = a[order[e]], b[order[e]]
        w_ij = 0.0
        w_ji = 0.0
        while e < order.size and a[order[e]] == i and b[order[e]] == j:
            if forward[order[e]]:
                w_ij += w[order[e]]
            else:
                w_ji += w[order[e]]
            e += 1
        value = max(w_ij, w_ji)
        first[pairs], second[pairs], entry[pairs] = i, j, value
        degree[i] += value
        degree[j] += value
        pairs += 1
    dinv = np.ones(n)
    diag = degree.copy()
    if normalized:
        for i in range(n):
            dinv[i] = 1.0 / np.sqrt(degree[i]) if degree[i] > 0 else 0.0
        diag[:] = 1.0
    lap[:] = 0.0
    for i in range(n):
        lap[i, i] = diag[i]
    for p in range(pairs):
        i, j = first[p], second[p]
        entry[p] = entry[p] * -dinv[i] * dinv[j]
        lap[i, j] = lap[j, i] = entry[p]
    return lap, diag, first[:pairs], second[:pairs], entry[:pairs]


@numba.njit(cache=True, nogil=True)
def _encodings(vectors, diag, first, second, entry, k):
    r"""``(vecs, vals)`` of :func:`laplacian_eigenpairs` from ``kk <= k`` eigenvectors ``[n, kk]`` of
    :math:`L` (diagonal ``diag``, off-diagonal ``entry`` at ``(first, second)`` and its mirror): the
    eigenvalues are the Rayleigh quotients :math:`v^\top L v / v^\top v`, the columns are put in their
    ascending order (stable) and multiplied by the sign of their largest-magnitude entry (the first
    within 1e-6 of it), and both are padded to ``k`` columns with zeros and NaN."""
    n, kk = vectors.shape
    quad = np.zeros(kk)
    norm = np.zeros(kk)
    for i in range(n):
        for j in range(kk):
            norm[j] += vectors[i, j] * vectors[i, j]
            quad[j] += diag[i] * vectors[i, j] * vectors[i, j]
    for p in range(entry.size):
        for j in range(kk):
            quad[j] += 2.0 * entry[p] * vectors[first[p], j] * vectors[second[p], j]
    quotients = quad / norm
    order = np.argsort(quotients, kind="mergesort")
    vecs = np.zeros((n, k), dtype=np.float32)
    vals = np.full((n, k), np.nan, dtype=np.float32)
    for c in range(kk):
        j = order[c]
        top = 0.0
        for i in range(n):
            top = max(top, abs(vectors[i, j]))
        sign = 1.0
        for i in range(n):
            if abs(vectors[i, j]) >= top - 1e-6:
                sign = -1.0 if vectors[i, j] < 0 else 1.0
                break
        for i in range(n):
            vecs[i, c] = vectors[i, j] * sign
            vals[i, c] = quotients[j]
    return vecs, vals


def _eigenpairs_of_chunk(
    problems: Sequence[LaplacianProblem], k: int, normalized: bool = True, keep_trivial: bool = False
) -> list[tuple[np.ndarray, np.ndarray]]:
    scratch = np.empty(max((p.num_nodes for p in problems), default=0) ** 2)
    return [laplacian_eigenpairs(p, k, scratch, normalized, keep_trivial) for p in problems]


def _stacked_eigenpairs_of_chunk(
    problems: Sequence[LaplacianProblem], k: int, normalized: bool = True, keep_trivial: bool = False
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The chunk's eigenpairs as one pair ``[sum n, k]``, the graphs' rows in order."""
    pairs = _eigenpairs_of_chunk(problems, k, normalized, keep_trivial)
    empty = np.zeros((0, k), np.float32)
    return [(np.concatenate([empty, *(v for v, _ in pairs)]), np.concatenate([empty, *(v for _, v in pairs)]))]


ChunkFn = Callable[..., list[tuple[np.ndarray, np.ndarray]]]
