"""Random-number-generator state in the full checkpoint, so that a resumed run draws what an
uninterrupted one would have drawn."""

from __future__ import annotations

import random
from typing import Any

import lightning as L
import numpy as np
import torch


class RNGState(L.Callback):
    """Saves the global Python, NumPy and torch (CPU, and CUDA when used) generator states into each
    full checkpoint, and restores them when training resumes from one.

    Lightning's checkpoints do not hold them. Without them a resumed run reshuffles its training set and
    redraws its dropout masks differently from the uninterrupted run, and its numbers differ. The
    checkpoint is written at the end of an epoch, after every draw of that epoch, so restoring the
    state there continues the same sequence.
    """

    def state_dict(self) -> dict[str, Any]:
        # numpy's state as a tensor: Lightning loads checkpoints with torch.load(weights_only=True)
        kind, keys, position, has_gauss, cached = np.random.get_state()
        numpy_state = {
            "kind": kind,
            "keys": torch.from_numpy(keys.astype(np.int64)),
            "pos": int(position),
            "has_gauss": int(has_gauss),
            "cached": float(cached),
        }
        state: dict[str, Any] = {"python": random.getstate(), "numpy": numpy_state, "torch": torch.get_rng_state()}
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            state["cuda"] = torch.cuda.get_rng_state_all()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        random.setstate(state_dict["python"])
        numpy_state = state_dict["numpy"]
        keys = numpy_state["keys"].numpy().astype(np.uint32)
        np.random.set_state((numpy_state["kind"], keys, numpy_state["pos"], numpy_state["has_gauss"], numpy_state["cached"]))
        torch.set_rng_state(state_dict["torch"])
        if "cuda" in state_dict and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state_dict["cuda"])
