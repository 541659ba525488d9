"""Safe loading of official raw files that are pickles: never a bare ``pickle.load`` or ``torch.load``.

Two kinds of loaders, one family:

- :class:`RestrictedUnpickler` subclasses resolve only the globals on their allowlist and refuse
  every other one (``refusing to unpickle <module>.<name>: ...``), so a raw file can hold data but
  never code: :func:`load_numpy_pickle` (numpy arrays in plain containers), :func:`load_tensor_pickle`
  (also torch tensors: ZINC, AQSOL, LRGB superpixels) and :func:`load_planetoid_pickle` (also scipy CSR
  matrices, read as plain arrays without running scipy).
- :func:`load_torch_file` is ``torch.load(weights_only=True)`` (torch's own restricted unpickler)
  for files written with ``torch.save`` (superpixels, TSP, OGB split files), with named extra globals.

Every failure is a :class:`~graphbench.vocabulary.errors.DataError` that names the file.

Unpickling a tensor from a plain pickle calls ``torch._utils._rebuild_tensor_v2`` on a storage that
``torch.storage._load_from_bytes`` rebuilds from bytes, and that function runs a full, unrestricted
``torch.load`` on them; :class:`TensorUnpickler` replaces it with a ``torch.load(weights_only=True)``
of the same bytes, so no global outside the allowlist is resolved, not even inside a storage.
"""

from __future__ import annotations

import codecs
import io
import pickle
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch

from graphbench.vocabulary.errors import DataError

#: allowed to resolve normally (the value ``None``) or replaced by the given object
Allowlist = dict[tuple[str, str], Any]


class RestrictedUnpickler(pickle.Unpickler):
    """An unpickler that resolves only the globals in :attr:`allowed` (``None``: the global itself;
    otherwise the object given in its place) and refuses every other one."""

    allowed: ClassVar[Allowlist] = {}
    #: what the refusal message says is allowed
    refusal: ClassVar[str] = "it is not on the allowlist"

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in self.allowed:
            raise pickle.UnpicklingError(f"refusing to unpickle {module}.{name}: {self.refusal}")
        replacement = self.allowed[(module, name)]
        return super().find_class(module, name) if replacement is None else replacement


NUMPY_GLOBALS: Allowlist = {
    ("numpy", "ndarray"): None,
    ("numpy", "dtype"): None,
    ("numpy.core.multiarray", "_reconstruct"): None,
    ("numpy._core.multiarray", "_reconstruct"): None,
    ("numpy.core.multiarray", "scalar"): None,
    ("numpy._core.multiarray", "scalar"): None,
    ("numpy.core.numeric", "_frombuffer"): None,  # arrays pickled with protocol 5
    ("numpy._core.numeric", "_frombuffer"): None,
    ("collections", "OrderedDict"): OrderedDict,
}


class NumpyUnpickler(RestrictedUnpickler):
    """Numpy arrays in dicts and lists."""

    allowed: ClassVar[Allowlist] = NUMPY_GLOBALS
    refusal = "only numpy arrays are allowed"


def _storage_from_bytes(payload: bytes) -> Any:
    """What ``torch.storage._load_from_bytes`` does, with torch's safe (weights-only) unpickler."""
    return torch.load(io.BytesIO(payload), weights_only=True)


def _latin1_encode(text: str, encoding: str = "utf-8") -> bytes:
    """``_codecs.encode`` as protocol-2 pickles use it for ``bytes`` (latin1 only)."""
    if encoding.lower().replace("-", "") not in ("latin1", "iso88591"):
        raise pickle.UnpicklingError(f"refusing _codecs.encode with encoding {encoding!r}")
    return codecs.encode(text, "latin1")


class TensorUnpickler(RestrictedUnpickler):
    """Numpy arrays and torch tensors (rebuilt from their storages) in lists, tuples and dicts."""

    allowed: ClassVar[Allowlist] = {
        **NUMPY_GLOBALS,
        ("torch._utils", "_rebuild_tensor_v2"): None,
        ("torch._utils", "_rebuild_tensor"): None,
        ("torch", "Size"): None,
        ("torch.storage", "_load_from_bytes"): _storage_from_bytes,
        ("_codecs", "encode"): _latin1_encode,
    }
    refusal = "only torch tensors, numpy arrays and plain containers are allowed"


class SparseMatrixState:
    """Stands in for ``scipy.sparse.csr_matrix`` while unpickling: it only records the pickled state
    (``data``, ``indices``, ``indptr``, ``_shape``); no scipy code runs."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.state = state

    def to_dense(self) -> np.ndarray:
        state = self.state
        shape = state.get("_shape", state.get("shape"))
        data, indices, indptr = (np.asarray(state[k]) for k in ("data", "indices", "indptr"))
        if shape is None or len(indptr) != shape[0] + 1:
            raise DataError("malformed sparse matrix in a Planetoid pickle")
        dense = np.zeros(shape, dtype=np.float32)
        rows = np.repeat(np.arange(shape[0]), np.diff(indptr))
        dense[rows, indices] = data
        return dense


def _numpy_reconstruct() -> Any:
    try:
        from numpy._core.multiarray import _reconstruct as fn
    except ImportError:  # numpy < 2
        from numpy.core.multiarray import _reconstruct as fn  # type: ignore[no-redef]
    return fn


class PlanetoidUnpickler(RestrictedUnpickler):
    """Exactly what the official Planetoid pickles hold: numpy arrays, scipy CSR matrices (as a
    state-recording stand-in) and the ``defaultdict(list)`` adjacency (plus ``codecs.encode``, which
    Python 3 uses for bytes in protocol-2 pickles)."""

    allowed: ClassVar[Allowlist] = {
        ("numpy", "ndarray"): np.ndarray,
        ("numpy", "dtype"): np.dtype,
        ("numpy.core.multiarray", "_reconstruct"): _numpy_reconstruct(),
        ("numpy._core.multiarray", "_reconstruct"): _numpy_reconstruct(),
        ("scipy.sparse.csr", "csr_matrix"): SparseMatrixState,
        ("scipy.sparse._csr", "csr_matrix"): SparseMatrixState,
        ("collections", "defaultdict"): defaultdict,
        ("__builtin__", "list"): list,
        ("builtins", "list"): list,
        ("_codecs", "encode"): codecs.encode,
    }
    refusal = "not part of the Planetoid format"


def load_numpy_pickle(path: Path) -> Any:
    """Unpickle a file that may only hold numpy arrays in dicts/lists."""
    data = Path(path).read_bytes()
    try:
        return NumpyUnpickler(io.BytesIO(data)).load()
    except pickle.UnpicklingError as exc:
        raise DataError(f"{path}: {exc}") from exc


def load_tensor_pickle(path: Path) -> Any:
    """Unpickle a raw file that may only hold tensors/numpy arrays in lists, tuples and dicts."""
    data = Path(path).read_bytes()
    try:
        return TensorUnpickler(io.BytesIO(data)).load()
    except (pickle.UnpicklingError, EOFError, RuntimeError) as exc:
        raise DataError(f"{path}: not a readable raw pickle of tensors ({exc})") from exc


def load_planetoid_pickle(path: Path) -> Any:
    """Unpickle one ``ind.<name>.<part>`` file (Python 2 pickles: latin1); sparse matrices come back
    dense (float32)."""
    try:
        obj = PlanetoidUnpickler(io.BytesIO(Path(path).read_bytes()), encoding="latin1").load()
    except (pickle.UnpicklingError, EOFError, AttributeError, TypeError, ValueError) as exc:
        raise DataError(f"{path}: not a valid Planetoid pickle ({exc})") from exc
    return obj.to_dense() if isinstance(obj, SparseMatrixState) else obj


def numpy_safe_globals() -> list[Any]:
    """The numpy globals that ``torch.save``'d dicts of numpy arrays need (OGB's split files)."""
    from numpy._core.multiarray import _reconstruct

    return [
        _reconstruct,
        (_reconstruct, "numpy.core.multiarray._reconstruct"),
        np.ndarray,
        np.dtype,
        *(type(np.dtype(t)) for t in ("int64", "int32", "float64", "float32", "bool")),
    ]


def load_torch_file(path: Path, what: str, safe_globals: Sequence[Any] | Callable[[], Sequence[Any]] = ()) -> Any:
    """``torch.load(path, weights_only=True)``: tensors (and the ``safe_globals``, e.g.
    :func:`numpy_safe_globals`) in plain containers. Any failure is a :class:`DataError` saying the
    file is not ``what`` (e.g. ``"a TSP_v2.pt file of tensors"``)."""
    try:
        allowed = list(safe_globals() if callable(safe_globals) else safe_globals)
        with torch.serialization.safe_globals(allowed):
            return torch.load(path, weights_only=True)
    except Exception as exc:
        raise DataError(f"{path}: not {what} ({type(exc).__name__}: {exc})") from None
