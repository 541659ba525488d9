"""open_storage: a journal file path or a database URL, the same study seen from two storage objects
(two processes); open_trial finds a trial by its number."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest
from optuna.storages import JournalStorage, RDBStorage

from graphbench.run.optuna_storage import is_database_url, open_storage, open_trial
from graphbench.vocabulary.errors import ConfigError


def test_a_path_is_a_journal_file_and_a_url_a_database(tmp_path: Path) -> None:
    assert isinstance(open_storage(str(tmp_path / "study.journal")), JournalStorage)
    assert isinstance(open_storage(f"sqlite:///{tmp_path / 'study.db'}"), RDBStorage)
    assert is_database_url("postgresql+psycopg://u@h/db") and not is_database_url("/shared/s.journal")


@pytest.mark.parametrize("kind", ["journal", "sqlite"])
def test_two_storage_objects_share_one_study(tmp_path: Path, kind: str) -> None:
    spec = str(tmp_path / "study.journal") if kind == "journal" else f"sqlite:///{tmp_path / 'study.db'}"
    study = optuna.create_study(study_name="s", storage=open_storage(spec), direction="maximize")
    asked = study.ask()
    trial = open_trial(spec, "s", asked.number, optuna.pruners.NopPruner())
    trial.report(0.25, step=3)
    assert study.trials[0].intermediate_values == {3: 0.25}
    with pytest.raises(ConfigError, match=r"the study 's' in .* has no trial 1$"):
        open_trial(spec, "s", 1, optuna.pruners.NopPruner())
    with pytest.raises(ConfigError, match="has no trial 0"):
        open_trial(spec, "other", 0, optuna.pruners.NopPruner())


def test_a_journal_in_a_missing_folder_or_an_empty_storage_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"the folder .*/nowhere does not exist; create it, or give a database URL"):
        open_storage(str(tmp_path / "nowhere" / "study.journal"))
    with pytest.raises(ConfigError, match=r"hydra\.sweeper\.storage is empty"):
        open_storage(" ")
