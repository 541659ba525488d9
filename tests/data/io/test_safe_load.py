"""The restricted unpickler for raw pickles of tensors: tensors and numpy arrays load, nothing else runs."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from graphbench.data.io.safe_load import load_tensor_pickle
from graphbench.vocabulary.errors import DataError


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_loads_tensors_numpy_and_containers(tmp_path: Path, protocol: int) -> None:
    obj = [{"a": torch.arange(4).view(2, 2)[:, 1], "b": torch.tensor(1.5)}, (np.arange(3), torch.zeros(0, 14), [1, "x"])]
    path = tmp_path / "t.pickle"
    path.write_bytes(pickle.dumps(obj, protocol=protocol))
    loaded = load_tensor_pickle(path)
    assert loaded[0]["a"].tolist() == [1, 3] and loaded[0]["b"].item() == 1.5
    assert loaded[1][0].tolist() == [0, 1, 2] and loaded[1][1].shape == (0, 14) and loaded[1][2] == [1, "x"]


class Evil:
    def __reduce__(self):
        return (print, ("pwned",))


class EvilStorage:
    """A storage whose bytes hold a malicious pickle: torch's own _load_from_bytes would run it."""

    def __reduce__(self):
        return (torch.storage._load_from_bytes, (pickle.dumps(Evil()),))


def test_refuses_arbitrary_globals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "evil.pickle"
    path.write_bytes(pickle.dumps([torch.ones(1), Evil()]))
    with pytest.raises(DataError, match=r"refusing to unpickle builtins.print"):
        load_tensor_pickle(path)
    assert "pwned" not in capsys.readouterr().out


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_storage_bytes_are_loaded_weights_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "evil_storage.pickle"
    path.write_bytes(pickle.dumps([EvilStorage()]))
    with pytest.raises(DataError, match="not a readable raw pickle"):
        load_tensor_pickle(path)
    assert "pwned" not in capsys.readouterr().out
