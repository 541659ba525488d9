"""The LRGB-tuned recipes (Tönshoff et al. 2023; conf/experiment/lrgb-tuned/): every one composes with the
reassessment's protocol and names its paper value, and the four datasets beside Peptides-func train one
fast_dev_run step on fixtures in their official raw layouts, at the authors' width (the GCN recipes with
``budget=500k``, the width solved under 500k parameters); the fixtures' dataset facts are those
tests/recipes/test_lrgb_tuned.py builds the networks with."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from omegaconf import DictConfig, OmegaConf

from graphbench.build.data import build_datamodule
from graphbench.build.model import network_builder
from graphbench.data.io.raw_files import RawFile, md5sum
from graphbench.data.sources.graph import peptides
from graphbench.data.sources.link import pcqm_contact
from graphbench.modules.network import count_parameters
from graphbench.tasks.train import train
from tests.data.sources.graph.test_peptides import write_struct_fixture as write_peptides_struct
from tests.data.sources.link.link_fixtures import write_pcqm_contact
from tests.data.sources.node.test_lrgb_superpixels import write_lrgb
from tests.paths import CONF
from tests.recipes.test_lrgb_tuned import INFO

RECIPES = sorted(p.stem for p in (CONF / "experiment" / "lrgb-tuned").glob("*.yaml"))
NEW_DATASETS = ("peptides-struct", "pcqm-contact", "pascalvoc-sp", "coco-sp")
NEW_RECIPES = [f"{dataset}-{model}" for dataset in NEW_DATASETS for model in ("gcn", "gine", "gatedgcn")]
#: the protocol of the reassessment's configs per dataset: (batch size, epochs, warmup epochs, gradient clipping)
PROTOCOL = {
    "peptides-func": (200, 250, 5, 1.0),
    "peptides-struct": (200, 250, 5, 1.0),
    "pcqm-contact": (500, 150, 5, 1.0),
    "pascalvoc-sp": (50, 200, 10, None),
    "coco-sp": (50, 200, 10, None),
}


def test_all_five_datasets_have_gcn_gine_and_gatedgcn() -> None:
    assert set(NEW_RECIPES) <= set(RECIPES)
    assert {f"peptides-func-{m}" for m in ("gcn", "gine", "gatedgcn", "gps")} <= set(RECIPES)


@pytest.mark.parametrize("recipe", RECIPES)
def test_recipe_composes_with_the_reassessment_protocol(compose_cfg: Callable[..., DictConfig], recipe: str) -> None:
    cfg = compose_cfg([f"experiment=lrgb-tuned/{recipe}"])
    OmegaConf.resolve(cfg)
    assert recipe == f"{cfg.dataset.name}-{cfg.model.name}"
    batch, epochs, warmup, clip = PROTOCOL[cfg.dataset.name]
    assert (cfg.dataset.batch_size, cfg.trainer.max_epochs, cfg.scheduler.warmup_epochs) == (batch, epochs, warmup)
    assert cfg.trainer.gradient_clip_val == clip and cfg.scheduler.max_epochs == epochs
    assert cfg.budget.max_params is None and cfg.optimizer.name == "adamw" and cfg.optimizer.lr == 0.001
    assert cfg.optimizer.weight_decay == 0.0 and cfg.model.residual is True
    # the vision datasets are standardized channel by channel, as the reassessment's VOC/COCO encoders do
    assert cfg.dataset.feature_norm == ("channelwise" if cfg.dataset.name.endswith("-sp") else "none")
    # the paper column: an entry for the dataset's own metric and this model, with its std
    (entry,) = [e for e in cfg.literature if e.metric == cfg.dataset.metric]
    assert entry.model == cfg.model.name and 0 < entry.value < 1 and 0 < entry.std < 0.01


def test_recipe_values_follow_the_reassessments_configs(compose_cfg: Callable[..., DictConfig]) -> None:
    """A few values that differ between datasets, as configs/LRGB-tuned/*.yaml of toenshoff/LRGB set them."""
    shape = {}
    for recipe in NEW_RECIPES:
        cfg = compose_cfg([f"experiment=lrgb-tuned/{recipe}"])
        shape[recipe] = (cfg.model.num_layers, cfg.head.name, cfg.pe.name, cfg.model.dropout, cfg.normalization.name)
    assert shape["peptides-struct-gine"] == (10, "mlp3", "lappe", 0.1, "none")
    assert shape["pcqm-contact-gatedgcn"] == (8, "dot", "lappe", 0.1, "batchnorm")
    assert shape["pascalvoc-sp-gcn"] == (10, "mlp3", "rwse", 0.0, "none")
    assert shape["pascalvoc-sp-gatedgcn"] == (10, "mlp2", "none", 0.2, "batchnorm")
    assert shape["coco-sp-gine"] == (6, "linear", "none", 0.1, "none")


@pytest.fixture(scope="session")
def lrgb_fixture_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The four datasets' fixtures in their official raw layouts, written once per session."""
    root = tmp_path_factory.mktemp("lrgb-fixtures")
    write_peptides_struct(root)
    write_pcqm_contact(root)
    write_lrgb(root, "pascalvoc-sp", [0, 20, 7])
    write_lrgb(root, "coco-sp", [0, 90, 13, 84])
    return root


@pytest.mark.parametrize("recipe", NEW_RECIPES)
def test_recipe_trains_one_step(
    compose_cfg: Callable[..., DictConfig],
    lrgb_fixture_root: Path,
    shared_cache_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    recipe: str,
) -> None:
    # the fixtures are not the published files: accept their checksums
    files = [RawFile(f.relpath, md5=md5sum(lrgb_fixture_root / f.relpath), url=f.url) for f in peptides.PEPTIDES_STRUCT_FILES]
    monkeypatch.setattr(peptides, "PEPTIDES_STRUCT_FILES", files)
    monkeypatch.setattr(pcqm_contact, "PCQM_CONTACT_FILES", [RawFile(pcqm_contact.PCQM_CONTACT_FILES[0].relpath)])
    cfg = compose_cfg(
        [
            f"experiment=lrgb-tuned/{recipe}",
            *(["budget=500k"] if recipe.endswith("-gcn") else []),
            f"paths.data_dir={lrgb_fixture_root}",
            f"paths.cache_dir={shared_cache_dir}",
            *([] if recipe.startswith(("pascalvoc", "coco")) else ["dataset.featurize_workers=1"]),  # SMILES parsing
            "++trainer.fast_dev_run=true",
            "trainer.enable_progress_bar=false",
            "logger=none",
        ]
    )
    record = train(cfg)
    assert record.status == "completed", record.status
    assert f"test/{cfg.dataset.metric}" in record.metrics
    assert record.num_params is not None and record.hidden_dim is not None
    datamodule = build_datamodule(cfg)
    datamodule.prepare_data()
    datamodule.setup("fit")
    assert datamodule.info == INFO[cfg.dataset.name]
    if not recipe.endswith("-gcn"):  # the authors' width, the source model's parameters
        assert record.hidden_dim == cfg.model.hidden_dim
        assert record.num_params == count_parameters(network_builder(cfg, INFO[cfg.dataset.name])(record.hidden_dim))
        return
    # budget=500k: within 500k parameters, and one width step more is over it
    assert 0.9 * 500_000 < record.num_params <= 500_000
    wider = network_builder(cfg, datamodule.info)(record.hidden_dim + int(cfg.model.width_multiple))
    assert count_parameters(wider) > 500_000


def test_the_learning_rate_warms_up_as_the_sources_cosine_with_warmup(
    compose_cfg: Callable[..., DictConfig],
    lrgb_fixture_root: Path,
    shared_cache_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """toenshoff/LRGB's cosine_with_warmup (num_warmup_epochs 5): the learning rate logged at epoch 0 is
    base_lr * 1e-6, at epoch 5 the base rate."""
    files = [RawFile(f.relpath, md5=md5sum(lrgb_fixture_root / f.relpath), url=f.url) for f in peptides.PEPTIDES_STRUCT_FILES]
    monkeypatch.setattr(peptides, "PEPTIDES_STRUCT_FILES", files)
    cfg = compose_cfg(
        [
            "experiment=lrgb-tuned/peptides-struct-gcn",
            f"paths.data_dir={lrgb_fixture_root}",
            f"paths.cache_dir={shared_cache_dir}",
            "dataset.featurize_workers=1",
            "model.hidden_dim=32",
            "trainer.max_epochs=6",
            "++trainer.limit_train_batches=1",
            "++trainer.limit_val_batches=1",
            "trainer.enable_progress_bar=false",
            "logger=none",
        ]
    )
    record = train(cfg)
    assert record.status == "completed", record.status
    lrs = [entry["lr"] for entry in record.history]
    assert lrs[0] == pytest.approx(1e-3 * 1e-6, rel=1e-9) and lrs[5] == pytest.approx(1e-3, rel=1e-9)
    assert lrs[1:5] == pytest.approx([2e-4, 4e-4, 6e-4, 8e-4])
