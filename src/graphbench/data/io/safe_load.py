"""Restricted unpickling of official raw pickles that hold torch tensors (ZINC, LRGB superpixels).

Such files were written with a plain ``pickle.dump`` of lists/dicts/tuples of tensors. Unpickling a
tensor calls ``torch._utils._rebuild_tensor_v2`` on a storage that ``torch.storage._load_from_bytes``
rebuilds from bytes, and that function runs a full, unrestricted ``torch.load`` on them. This
unpickler allows exactly the tensor-rebuild functions, numpy arrays and plain containers, and
replaces ``_load_from_bytes`` with a ``torch.load(weights_only=True)`` of the same bytes, so no
global outside the allowlist is ever resolved, not even inside a storage.
"""
from __future__ import annotations

import codecs
import io
import pickle
from pathlib import Path
from typing import Any

import torch

from graphbench.data.io.raw_files import _NumpyOnlyUnpickler
from graphbench.errors import DataError


def _storage_from_bytes(payload: bytes) -> Any:
    """What ``torch.storage._load_from_bytes`` does, with torch's safe (weights-only) unpickler."""
    return torch.load(io.BytesIO(payload), weights_only=True)


def _latin1_encode(text: str, encoding: str = "utf-8") -> bytes:
    """``_codecs.encode`` as protocol-2 pickles use it for ``bytes`` (latin1 only)."""
    if encoding.lower().replace("-", "") not in ("latin1", "iso88591"):
        raise pickle.UnpicklingError(f"refusing _codecs.encode with encoding {encoding!r}")
    return codecs.encode(text, "latin1")


class _TensorUnpickler(_NumpyOnlyUnpickler):
    """Numpy arrays (as :func:`load_numpy_pickle`, plus protocol 5), and torch tensors rebuilt from their storages."""

    _TORCH_ALLOWED = {
        ("torch._utils", "_rebuild_tensor_v2"),
        ("torch._utils", "_rebuild_tensor"),
        ("torch", "Size"),
        # numpy arrays pickled with protocol 5 are rebuilt from a raw buffer
        ("numpy.core.numeric", "_frombuffer"),
        ("numpy._core.numeric", "_frombuffer"),
    }
    _REPLACED = {
        ("torch.storage", "_load_from_bytes"): _storage_from_bytes,
        ("_codecs", "encode"): _latin1_encode,
    }

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in self._REPLACED:
            return self._REPLACED[(module, name)]
        if (module, name) in self._TORCH_ALLOWED:
            return pickle.Unpickler.find_class(self, module, name)
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"refusing to unpickle {module}.{name}: only torch tensors, numpy arrays and plain containers are allowed"
        )


def load_tensor_pickle(path: Path) -> Any:
    """Unpickle a raw file that may only hold tensors/numpy arrays in lists, tuples and dicts."""
    data = Path(path).read_bytes()
    try:
        return _TensorUnpickler(io.BytesIO(data)).load()
    except (pickle.UnpicklingError, EOFError, RuntimeError) as exc:
        raise DataError(f"{path}: not a readable raw pickle of tensors ({exc})") from exc
