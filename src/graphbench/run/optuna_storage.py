"""Where an Optuna study lives, written as ``hydra.sweeper.storage``, and the trial a run is.

A storage is one string (:func:`open_storage`):

- a database URL (it contains ``://``): ``sqlite:///optuna-cycles.db``, ``postgresql+psycopg://user@host/db``,
  ``mysql+pymysql://...``: Optuna's ``RDBStorage`` (SQLAlchemy 2; the driver is the user's to install,
  ``psycopg`` for PostgreSQL);
- anything else is the path of a journal file: Optuna's ``JournalStorage`` over a
  ``JournalFileBackend``, an append-only log that workers on a shared file system write under a file
  lock, with no server (what Optuna advises for NFS clusters).

The search (:mod:`graphbench.sweep.optuna_search`) and the pruning callback of each trial
(:mod:`graphbench.callbacks.optuna_pruning`) open the same string, in their own processes.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import TYPE_CHECKING

from graphbench.vocabulary.errors import ConfigError

if TYPE_CHECKING:
    import optuna
    from optuna.storages import BaseStorage

#: what separates a database URL's scheme from the rest; a storage without it is a journal file
URL_MARK: str = "://"
#: tries to open a database whose tables another worker may be creating at the same moment
OPEN_TRIES: int = 5


def is_database_url(storage: str) -> bool:
    return URL_MARK in storage


def open_storage(storage: str) -> BaseStorage:
    """The Optuna storage that ``storage`` names (see the module docstring). A journal file's folder
    must exist (one :class:`ConfigError` line otherwise); the file is created by its first write.
    Workers that open one new database at once race to create Optuna's tables: a failed try is
    repeated after a random pause of up to a second, :data:`OPEN_TRIES` tries in all."""
    from optuna.storages import JournalStorage, RDBStorage
    from optuna.storages.journal import JournalFileBackend

    if not storage.strip():
        raise ConfigError("hydra.sweeper.storage is empty: give a journal file path, a database URL, or null")
    if not is_database_url(storage):
        path = Path(storage).expanduser()
        if not path.parent.is_dir():
            raise ConfigError(
                f"hydra.sweeper.storage={storage}: the folder {path.parent} does not exist; create it, or give a "
                "database URL (sqlite:///..., postgresql+psycopg://...)"
            )
        return JournalStorage(JournalFileBackend(str(path)))
    for attempt in range(1, OPEN_TRIES + 1):
        try:
            return RDBStorage(storage)
        except ImportError as exc:
            raise ConfigError(f"hydra.sweeper.storage={storage}: the database driver is missing ({exc})") from None
        except Exception:
            if attempt == OPEN_TRIES:
                raise
            time.sleep(random.random())
    raise AssertionError("unreachable")


def open_trial(storage: str, study_name: str, number: int, pruner: optuna.pruners.BasePruner) -> optuna.Trial:
    """Trial ``number`` of the study ``study_name`` in ``storage``, judged by ``pruner``: what the
    process that runs the trial reports to (the search asked it in another process). One
    :class:`ConfigError` line when there is no such study or trial."""
    import optuna

    opened = open_storage(storage)
    try:
        study = optuna.load_study(study_name=study_name, storage=opened, pruner=pruner)
        trial_id = opened.get_trial_id_from_study_id_trial_number(opened.get_study_id_from_name(study_name), number)
    except KeyError:
        raise ConfigError(f"optuna_trial: the study {study_name!r} in {storage} has no trial {number}") from None
    return optuna.trial.Trial(study, trial_id)
