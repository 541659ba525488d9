"""The processed cache keyed by its raw files: a changed raw file rebuilds it, a wrong data root fails
before a warm cache is used, MD5s are recomputed only when a file's stamp changed."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import shutil
import time
from pathlib import Path

import pytest
import torch

from graphbench.data.datamodules import NodeLevelDataModule
from graphbench.data.io import raw_manifest
from graphbench.data.io.raw_files import RawFile, md5sum
from graphbench.data.io.raw_manifest import RACY_NS, RawManifest, load_or_build_from_raw
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.node.geom_gcn import GeomGCN
from graphbench.vocabulary.errors import ConfigError, DataError
from tests.conftest import real_data_root
from tests.data._datamodules import node_level

TOY = RawFile("toy/raw/values.txt")
AN_HOUR_AGO = time.time() - 3600


class Toy:
    """A build that reads one raw file of integers, counting its builds."""

    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = cache_dir
        self.builds = 0

    def build(self, raw: RawRoot) -> list[int]:
        self.builds += 1
        (path,) = raw.locate([TOY], "Toy")
        return [int(v) for v in path.read_text().split()]

    def entry(self, digest: str) -> Path:
        return self.cache_dir / f"toy-{digest}.pt"

    def load(self, data_dir: Path) -> tuple[list[int], str]:
        record = self.cache_dir / "toy.raw.json"
        return load_or_build_from_raw(record, self.entry, RawRoot(data_dir), self.build, "toy")


def write_toy(root: Path, text: str, mtime: float | None = AN_HOUR_AGO) -> Path:
    path = root / TOY.relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def count_md5s(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    hashed: list[Path] = []

    def counting(path: Path, chunk: int = 1 << 20) -> str:
        hashed.append(Path(path))
        return md5sum(path, chunk)

    monkeypatch.setattr(raw_manifest, "md5sum", counting)
    return hashed


def test_a_changed_raw_file_rebuilds_the_cache(tmp_path: Path) -> None:
    data, toy = tmp_path / "data", Toy(tmp_path / "cache")
    path = write_toy(data, "1 2 3")
    first, digest = toy.load(data)
    assert (first, toy.builds) == ([1, 2, 3], 1)
    assert toy.load(data) == ([1, 2, 3], digest) and toy.builds == 1
    path.write_text("1 2 4")  # one byte, same size
    second, changed = toy.load(data)
    assert (second, toy.builds) == ([1, 2, 4], 2)
    assert changed != digest
    assert sorted(p.name for p in (tmp_path / "cache").glob("*.pt")) == sorted([f"toy-{digest}.pt", f"toy-{changed}.pt"])
    path.write_text("1 2 3")  # back to the first content: the first cache is served again
    assert toy.load(data) == ([1, 2, 3], digest) and toy.builds == 2


def test_the_record_names_the_calls_and_stamps_of_the_build(tmp_path: Path) -> None:
    data, toy = tmp_path / "data", Toy(tmp_path / "cache")
    path = write_toy(data, "7")
    toy.load(data)
    record = json.loads((tmp_path / "cache" / "toy.raw.json").read_text())
    assert record["calls"] == [{"dataset": "Toy", "files": [{"relpath": TOY.relpath, "md5": None, "url": None}], "archives": []}]
    stat = path.stat()
    assert record["stamps"] == {str(path.resolve()): [stat.st_size, stat.st_mtime_ns, md5sum(path)]}


def test_md5_is_recomputed_only_when_the_stamp_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data, toy = tmp_path / "data", Toy(tmp_path / "cache")
    path = write_toy(data, "1 2 3")
    toy.load(data)
    hashed = count_md5s(monkeypatch)
    toy.load(data)
    assert hashed == []  # size and mtime as recorded: the recorded MD5 is used
    os.utime(path, (AN_HOUR_AGO + 60, AN_HOUR_AGO + 60))  # touched, same bytes: hashed, same cache
    assert toy.load(data)[0] == [1, 2, 3] and toy.builds == 1
    assert hashed == [path]


def test_a_stamp_as_young_as_its_file_is_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write in the same clock tick as the stamp keeps mtime: a file modified less than RACY_NS
    before it was stamped is hashed again on the next run (git's racily clean entries)."""
    data, toy = tmp_path / "data", Toy(tmp_path / "cache")
    path = write_toy(data, "1 2 3", mtime=None)
    assert time.time_ns() - path.stat().st_mtime_ns < RACY_NS
    toy.load(data)
    (stamp,) = json.loads((tmp_path / "cache" / "toy.raw.json").read_text())["stamps"].values()
    assert stamp[1] == -1
    hashed = count_md5s(monkeypatch)
    path.write_text("1 2 4")  # possibly within the same mtime tick as the stamp
    assert toy.load(data)[0] == [1, 2, 4] and hashed == [path]


def test_a_warm_cache_does_not_hide_a_wrong_data_root(tmp_path: Path) -> None:
    data, toy = tmp_path / "data", Toy(tmp_path / "cache")
    write_toy(data, "1")
    toy.load(data)
    (tmp_path / "afile").write_text("")
    with pytest.raises(ConfigError) as err:
        toy.load(tmp_path / "afile")
    assert str(err.value) == (
        f"paths.data_dir={tmp_path / 'afile'} is a file, not a directory; "
        "point paths.data_dir (env GRAPHBENCH_DATA) at the folder that holds the raw files"
    )
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError) as missing:
        toy.load(tmp_path / "empty")
    assert str(missing.value).splitlines()[:2] == [
        f"Raw files of Toy not found under data root {tmp_path / 'empty'} (its one file is not there):",
        f"  - {tmp_path / 'empty' / TOY.relpath}",
    ]
    assert toy.builds == 1


def test_a_published_md5_is_checked_when_a_file_changed_under_a_warm_cache(tmp_path: Path) -> None:
    data = tmp_path / "data"
    path = write_toy(data, "1 2 3")
    published = RawFile(TOY.relpath, md5=md5sum(path))

    def build(raw: RawRoot) -> int:
        raw.locate([published], "Toy")
        return 1

    record, entry = tmp_path / "cache" / "toy.raw.json", lambda digest: tmp_path / "cache" / f"toy-{digest}.pt"
    load_or_build_from_raw(record, entry, RawRoot(data), build, "toy")
    path.write_text("1 2 4")
    with pytest.raises(DataError, match=f"^{path} is corrupted or not the official file: MD5 "):
        load_or_build_from_raw(record, entry, RawRoot(data), build, "toy")


def test_generated_data_has_no_raw_files_to_check(tmp_path: Path) -> None:
    builds = []
    record, entry = tmp_path / "cache" / "gen.raw.json", lambda digest: tmp_path / "cache" / f"gen-{digest}.pt"
    (tmp_path / "afile").write_text("")
    for data_dir in (tmp_path / "nowhere", tmp_path / "afile"):  # the data root is never read
        value, _ = load_or_build_from_raw(record, entry, RawRoot(data_dir), lambda raw: builds.append(1) or 5, "gen")
        assert value == 5
    assert builds == [1]
    assert json.loads(record.read_text()) == {"calls": [], "stamps": {}}


def test_missing_files_are_not_announced_as_a_build_and_leave_no_lock(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    toy = Toy(tmp_path / "cache")
    with caplog.at_level(logging.INFO, logger="graphbench.data.store.cache"), pytest.raises(DataError):
        toy.load(tmp_path / "empty")
    assert [r.getMessage() for r in caplog.records] == []
    assert list((tmp_path / "cache").iterdir()) == []
    write_toy(tmp_path / "data", "1")
    with caplog.at_level(logging.INFO, logger="graphbench.data.store.cache"):
        toy.load(tmp_path / "data")
    assert caplog.records[0].getMessage() == f"processing toy: building the processed cache in {tmp_path / 'cache'} ..."
    assert sorted(p.suffix for p in (tmp_path / "cache").iterdir()) == [".json", ".pt"]


def texas(data_dir: Path, cache: Path) -> NodeLevelDataModule:
    """WebKB/texas (GeomGCN) read from ``data_dir``, cached under ``cache``: one graph, its fixed split."""
    source = GeomGCN(name="texas")
    return node_level(
        source, data_dir, cache, name="texas", task_type="multiclass", metric="accuracy", higher_is_better=True, batch_size=None
    )


@pytest.mark.real_data
def test_texas_is_rebuilt_after_one_raw_byte_changed(tmp_path: Path) -> None:
    """A copy of WebKB/texas with one feature byte edited: the cache is rebuilt
    with exactly that feature changed; a wrong data root fails before the warm cache is used."""
    data = tmp_path / "data"
    shutil.copytree(real_data_root() / "WebKB" / "texas", data / "WebKB" / "texas")

    def setup(data_dir: Path) -> NodeLevelDataModule:
        module = texas(data_dir, tmp_path / "cache")
        module.setup()
        return module

    before = setup(data).graph
    assert before is not None
    features = data / "WebKB/texas/raw/out1_node_feature_label.txt"
    lines = features.read_text().splitlines(keepends=True)
    node, values, label = lines[1].split("\t")
    flipped = "1" if values[0] == "0" else "0"
    lines[1] = "\t".join([node, flipped + values[1:], label])
    features.write_text("".join(lines))
    after = setup(data).graph
    assert after is not None
    assert len(list((tmp_path / "cache").glob("texas-*.pt"))) == 2
    changed = (before.x != after.x).nonzero().tolist()
    assert changed == [[int(node), 0]] and after.x[int(node), 0].item() == float(flipped)
    assert torch.equal(before.edge_index, after.edge_index) and torch.equal(before.y, after.y)
    (tmp_path / "empty").mkdir()
    with pytest.raises(
        DataError, match=r"^Raw files of texas not found under data root .*empty \(none of its 12 files is there\):\n"
    ):
        setup(tmp_path / "empty")
    assert not list((tmp_path / "cache").glob("*.lock"))


def test_an_unreadable_record_is_rebuilt_with_its_cache(tmp_path: Path) -> None:
    data, toy = tmp_path / "data", Toy(tmp_path / "cache")
    write_toy(data, "1 2")
    _, digest = toy.load(data)
    record = RawManifest(tmp_path / "cache" / "toy.raw.json")
    record.path.write_text("{not json")
    assert record.read() is None
    assert toy.load(data) == ([1, 2], digest) and toy.builds == 2
    assert record.digest(data, download=False) == digest


def _load_in_process(cache_dir: str, data_dir: str, index: int) -> None:
    def build(raw: RawRoot) -> list[int]:
        (path,) = raw.locate([TOY], "Toy")
        (Path(cache_dir).parent / f"built-{index}").touch()
        time.sleep(0.2)  # the others arrive while this one builds
        return [int(v) for v in path.read_text().split()]

    toy = Toy(Path(cache_dir))
    value, _ = load_or_build_from_raw(Path(cache_dir) / "toy.raw.json", toy.entry, RawRoot(data_dir), build, "toy")
    assert value == [4, 5]


def test_concurrent_first_runs_build_once(tmp_path: Path) -> None:
    """The jobs of an array share one cache directory: the first build, which learns the raw files,
    runs once, and the others load its result."""
    write_toy(tmp_path / "data", "4 5")
    ctx = multiprocessing.get_context("fork")
    args = (str(tmp_path / "cache"), str(tmp_path / "data"))
    procs = [ctx.Process(target=_load_in_process, args=(*args, i)) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    assert len(list(tmp_path.glob("built-*"))) == 1
    assert sorted(p.suffix for p in (tmp_path / "cache").iterdir()) == [".json", ".pt"]


def test_file_md5s_name_each_recorded_raw_file_with_its_current_md5(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a run records in its provenance: read from the stamps just checked (no hashing), and a
    file whose stamp another job dropped is hashed."""
    data, toy = tmp_path / "data", Toy(tmp_path / "cache")
    path = write_toy(data, "1 2 3")
    toy.load(data)
    record = RawManifest(tmp_path / "cache" / "toy.raw.json")
    hashed = count_md5s(monkeypatch)
    assert record.file_md5s(data) == {TOY.relpath: md5sum(path)}
    assert hashed == []
    calls, _ = record.read() or ([], {})
    record.write(calls, {})
    assert record.file_md5s(data) == {TOY.relpath: md5sum(path)} and hashed == [path]
    assert RawManifest(tmp_path / "cache" / "none.raw.json").file_md5s(data) == {}


@pytest.mark.real_data
def test_a_datamodule_names_the_md5_of_every_raw_file_it_read(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(real_data_root() / "WebKB" / "texas", data / "WebKB" / "texas")
    module = texas(data, tmp_path / "cache")
    with pytest.raises(DataError, match=r"^texas: call prepare_data\(\) or setup\(\) before raw_file_md5s\(\)$"):
        module.raw_file_md5s()
    module.setup()
    files = sorted(p for p in (data / "WebKB" / "texas").rglob("*") if p.is_file())
    assert module.raw_file_md5s() == {str(p.relative_to(data)): md5sum(p) for p in files}
    assert len(files) == 12
