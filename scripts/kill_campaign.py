"""The kill campaign: a small real run killed at random moments and at every write it makes, each
relaunched with ``resume=auto`` in its directory until it completes, and compared with an
uninterrupted run. Its table is in docs/checkpoints_and_loggers.md.

    python scripts/kill_campaign.py --random 100 --targeted --out kills.md
    python scripts/kill_campaign.py --cases results.json#1:after:SIGKILL,random:SIGTERM

The run is ``model=gcn trainer.max_epochs=6 seed=3`` on a small cycles dataset (:data:`RUN`). Every run of
the campaign is a process of its own (scripts/killed_run.py, forked from an interpreter that imported
torch, Lightning, PyG and Hydra once), in a fresh run directory with a cold cache. First the
uninterrupted run, with every write event it makes (``<file>#<n>:<moment>``, see scripts/killed_run.py)
and its duration. Then the cases:

* targeted: the run signals itself at one write event of the uninterrupted run (SIGKILL at every event;
  SIGTERM and SIGINT at every ``before`` event), then is relaunched;
* random: the campaign sends the signal at a moment drawn uniformly from the uninterrupted run's
  duration (measured with ``--jobs`` runs at once), from the fork to the exit for half of the cases and
  from the run's claim of its directory to the exit for the others, cycling SIGKILL, SIGTERM, SIGINT;
  every other random case kills its first relaunch too, at a moment drawn from the fork, with
  ``checkpoint_every_s=0`` for half of them and the default interval for the others.

A case is exact when the last relaunch exits 0 with ``status: completed``, every row of ``metrics.csv``,
the record (metrics, epochs trained, history, best and tested epoch, parameters) and ``predictions.npz``
equal the uninterrupted run's, at every stop (after each kill, and at the end) every file in the run
directory and the cache parses or is a partial write (``.tmp``, ``.partial``), none of which is left at the
end, and a process ended by SIGTERM or SIGINT left a truthful status (never ``running`` or ``failed``) or,
signalled while it started, wrote nothing.
"""

from __future__ import annotations

import argparse
import csv
import json
import multiprocessing
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import killed_run  # scripts/killed_run.py, beside this file

from graphbench.run.files import is_partial

REPO = Path(__file__).resolve().parents[1]
#: the run killed: 6 epochs of gcn on 160 cycles graphs, a few seconds
RUN: list[str] = [
    "model=gcn",
    "trainer.max_epochs=6",
    "seed=3",
    "dataset.num_train=96",
    "dataset.num_val=32",
    "dataset.num_test=32",
    "dataset.batch_size=32",
    "trainer.enable_progress_bar=false",
    "model.hidden_dim=16",
    "model.num_layers=2",
]
#: the command of the campaign's run, as a user types it
COMMAND = "python run.py " + " ".join(RUN)
#: the record's keys an exact relaunch reproduces
RECORD_KEYS: tuple[str, ...] = ("status", "metrics", "epochs_trained", "history", "best_epoch", "tested_epoch", "num_params")
SIGNAL_NAMES: tuple[str, ...] = ("SIGKILL", "SIGTERM", "SIGINT")
PRELOAD: list[str] = ["graphbench.main", "graphbench.tasks.train", "torch_geometric", "lightning.pytorch", "hydra", "omegaconf"]


def _child(args: list[str] | None, log: str) -> None:
    """In the forked process: ``python scripts/killed_run.py *args`` in the repository, output to ``log``
    (``None``: nothing, the start of the warm interpreter)."""
    if args is None:
        return
    os.chdir(REPO)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    multiprocessing.set_start_method(None, force=True)  # its own children start the platform's default way
    os.environ.update({"WANDB_MODE": "offline", "HYDRA_FULL_ERROR": "0"})
    killed_run.main(args)


@dataclass
class Launch:
    """One process of a case: its arguments, the moment (seconds after start) the campaign signals it, its end."""

    args: list[str]
    at_s: float | None = None
    signal: str = "SIGKILL"
    exit_code: int | None = None
    seconds: float = 0.0
    status: str = "absent"
    #: ``at_s`` counts from the moment this file appears (the run's claim), not from the start
    after: Path | None = None
    appeared_s: float | None = None


class Runner:
    """Starts runs forked from a warm interpreter (multiprocessing's forkserver, :data:`PRELOAD` imported once)."""

    def __init__(self) -> None:
        self.context = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload(PRELOAD)
        warm_up = self.context.Process(target=_child, args=(None, os.devnull))  # the imports, before anything is timed
        warm_up.start()
        warm_up.join()

    def run(self, launch: Launch, log: Path) -> Launch:
        process = self.context.Process(target=_child, args=(launch.args, str(log)))
        start = time.perf_counter()
        process.start()
        if launch.after is not None:
            while process.exitcode is None and not launch.after.exists():
                time.sleep(0.002)
            launch.appeared_s = time.perf_counter() - start
        if launch.at_s is not None:
            process.join(launch.at_s)
            if process.exitcode is None:
                assert process.pid is not None
                os.kill(process.pid, killed_run.SIGNALS[launch.signal])
        process.join(600)
        if process.exitcode is None:
            process.kill()
            process.join()
        launch.seconds = time.perf_counter() - start
        launch.exit_code = process.exitcode
        return launch


@dataclass
class Case:
    """A kill (``moment``: a write event, or ``random``) with ``signal``, and what came of it."""

    moment: str
    signal: str
    second_kill: bool = False
    every_s: float | None = None  # checkpoint_every_s; None: the config's default
    after_claim: bool = False  # a random moment drawn over the run from its claim of the directory to its exit
    launches: list[Launch] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.moment}:{self.signal}" + (" +second kill" if self.second_kill else "")

    @property
    def exact(self) -> bool:
        return not self.problems


@dataclass
class Reference:
    rows: list[dict[str, str]]
    record: dict[str, Any]
    predictions: dict[str, np.ndarray]
    events: list[str]
    seconds: float  # from the start to the exit
    claimed_s: float  # from the claim of the run directory to the exit


def csv_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def predictions(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as archive:
        return {k: archive[k] for k in archive.files}


def unreadable(path: Path) -> str | None:
    """Why the file ``path`` does not parse as what its name says it is, or ``None`` when it does (or is
    a partial write, or a log)."""
    import torch

    from graphbench.run.record import RunRecord

    name = path.name
    try:
        if is_partial(name) or name.endswith((".log", ".lock")):
            return None
        if name == "results.json":
            RunRecord.from_dict(json.loads(path.read_text()))
        elif name.endswith(".json"):
            json.loads(path.read_text())
        elif name.endswith((".ckpt", ".pt")):
            loaded = torch.load(path, map_location="cpu", weights_only=False)
            if name.endswith(".ckpt") and "state_dict" not in loaded:
                return "no state_dict"
        elif name.endswith((".csv", ".csv.resuming")):
            with open(path, newline="") as handle:
                rows = list(csv.reader(handle))
            if not rows or any(len(row) != len(rows[0]) for row in rows):
                return "rows of unequal length"
        elif name.endswith(".npz"):
            predictions(path)
        elif name.endswith(".yaml"):
            yaml.unsafe_load(path.read_text())
        else:
            return "unknown file"
    except Exception as exc:  # what a reader of the file would meet
        return f"{type(exc).__name__}: {str(exc)[:80]}"
    return None


def file_problems(*folders: Path) -> list[str]:
    """Every file below ``folders`` that does not parse (:func:`unreadable`)."""
    problems = []
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            reason = unreadable(path)
            if reason is not None:
                problems.append(f"{path.relative_to(folder.parent)}: {reason}")
    return problems


def status_of(run_dir: Path) -> str:
    try:
        return str(json.loads((run_dir / "results.json").read_text())["status"])
    except FileNotFoundError:
        return "absent"
    except Exception as exc:
        return f"unreadable ({type(exc).__name__})"


def record_bytes(run_dir: Path) -> bytes | None:
    try:
        return (run_dir / "results.json").read_bytes()
    except FileNotFoundError:
        return None


def run_args(run_dir: Path, cache_dir: Path, every_s: float | None, resume: bool) -> list[str]:
    extra = [] if every_s is None else [f"checkpoint_every_s={every_s:g}"]
    return [*RUN, *extra, f"hydra.run.dir={run_dir}", f"paths.cache_dir={cache_dir}", *(["resume=auto"] if resume else [])]


def reference_run(runner: Runner, work: Path, jobs: int) -> Reference:
    """The uninterrupted run, with its write events; its duration is the median of ``jobs`` such runs made
    at once, as the cases run (on a loaded machine a run takes longer than alone)."""
    events = work / "reference-events.txt"

    def uninterrupted(k: int) -> Launch:
        run_dir, cache_dir = work / f"reference-{k}", work / f"reference-{k}-cache"
        args = ["--events", str(events)] if k == 0 else []
        launch = Launch([*args, "--", *run_args(run_dir, cache_dir, 0, True)], after=run_dir / "results.json")
        runner.run(launch, work / f"reference-{k}.log")
        if launch.exit_code != 0:
            raise SystemExit(
                f"error: the uninterrupted run failed (exit code {launch.exit_code}); see {work / f'reference-{k}.log'}"
            )
        return launch

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        launches = list(pool.map(uninterrupted, range(jobs)))
    run_dir = work / "reference-0"
    return Reference(
        csv_rows(run_dir / "csv" / "metrics.csv"),
        json.loads((run_dir / "results.json").read_text()),
        predictions(run_dir / "predictions.npz"),
        events.read_text().split(),
        statistics.median(launch.seconds for launch in launches),
        statistics.median(launch.seconds - (launch.appeared_s or 0.0) for launch in launches),
    )


def run_case(runner: Runner, case: Case, reference: Reference, work: Path, rng: random.Random) -> Case:
    """Kill, relaunch with ``resume=auto`` (killing the first relaunch too for a ``second_kill``), then
    relaunch until done; record every problem in ``case.problems``."""
    folder = Path(tempfile.mkdtemp(prefix="case-", dir=work))
    run_dir, cache_dir, log = folder / "run", folder / "cache", folder / "output.log"
    every_s = 0.0 if case.moment != "random" else case.every_s
    args = run_args(run_dir, cache_dir, every_s, True)
    if case.moment == "random" and case.after_claim:
        after = run_dir / "results.json"
        first = Launch(["--", *args], at_s=rng.uniform(0, reference.claimed_s), signal=case.signal, after=after)
    elif case.moment == "random":
        first = Launch(["--", *args], at_s=rng.uniform(0, reference.seconds), signal=case.signal)
    else:
        first = Launch(["--kill", case.moment, "--signal", case.signal, "--", *args])
    kills = [first]
    if case.second_kill:
        kills.append(Launch(["--", *args], at_s=rng.uniform(0, reference.seconds), signal=rng.choice(SIGNAL_NAMES)))
    for launch in kills:
        before = record_bytes(run_dir)
        runner.run(launch, log)
        launch.status = status_of(run_dir)
        case.launches.append(launch)
        case.problems += [f"after {launch.signal}: {p}" for p in file_problems(run_dir, cache_dir)]
        # a process ended by SIGTERM or SIGINT wrote a truthful status, or nothing (signalled while it started)
        wrote = record_bytes(run_dir) != before
        if launch.signal != "SIGKILL" and wrote and launch.status.startswith(("running", "failed", "unreadable")):
            case.problems.append(f"after {launch.signal}: status {launch.status!r} (exit code {launch.exit_code})")
    final = runner.run(Launch(["--", *args]), log)
    final.status = status_of(run_dir)
    case.launches.append(final)
    case.problems += compare(run_dir, reference, final)
    case.problems += [f"at the end: {p}" for p in file_problems(run_dir, cache_dir)]
    case.problems += [f"at the end: {p.relative_to(folder)} left behind" for p in run_dir.rglob("*") if is_partial(p)]
    if case.exact:
        shutil.rmtree(folder, ignore_errors=True)
    else:
        case.problems.append(f"kept in {folder}")
    return case


def compare(run_dir: Path, reference: Reference, final: Launch) -> list[str]:
    """How the relaunched run differs from the uninterrupted one."""
    if final.exit_code != 0:
        return [f"the relaunch exited {final.exit_code} ({final.status})"]
    problems = []
    record = json.loads((run_dir / "results.json").read_text())
    problems += [
        f"results.json {key}: {record.get(key)!r}" for key in RECORD_KEYS if record.get(key) != reference.record.get(key)
    ]
    rows = csv_rows(run_dir / "csv" / "metrics.csv")
    if rows != reference.rows:
        problems.append(f"metrics.csv: {len(rows)} rows, {sum(r in reference.rows for r in rows)} of them the reference's")
    got = predictions(run_dir / "predictions.npz")
    if got.keys() != reference.predictions.keys() or any(not np.array_equal(got[k], v) for k, v in reference.predictions.items()):
        problems.append("predictions.npz differs")
    return problems


def planned_cases(reference: Reference, targeted: bool, random_kills: int) -> list[Case]:
    cases = []
    if targeted:
        for event in reference.events:
            for signal_name in SIGNAL_NAMES:
                if signal_name == "SIGKILL" or event.endswith(":before"):
                    cases.append(Case(event, signal_name))
    for i in range(random_kills):
        every_s = 0.0 if (i // 2) % 2 == 0 else None
        cases.append(Case("random", SIGNAL_NAMES[i % 3], second_kill=i % 2 == 1, every_s=every_s, after_claim=(i // 4) % 2 == 1))
    return cases


def parse_cases(text: str) -> list[Case]:
    """``--cases``: ``<event>:<signal>`` or ``random:<signal>`` items, comma-separated; ``+`` after the
    signal kills the first relaunch too."""
    cases = []
    for item in text.split(","):
        moment, _, signal_name = item.strip().rpartition(":")
        second = signal_name.endswith("+")
        signal_name = signal_name.rstrip("+")
        if signal_name not in SIGNAL_NAMES or not moment:
            raise SystemExit(f"error: --cases item {item!r} is not <event>:<signal>; signals: {list(SIGNAL_NAMES)}")
        cases.append(Case(moment, signal_name, second_kill=second))
    return cases


def moment_group(case: Case) -> str:
    """The row a case is counted in: the file and moment of a targeted kill (all its writes together)."""
    if case.moment == "random":
        window = "random moment after the claim" if case.after_claim else "random moment"
        return f"{window}, relaunch killed again" if case.second_kill else window
    kind, _, rest = case.moment.partition("#")
    number, _, moment = rest.partition(":")
    if kind == "results.json":
        kind = {"1": "results.json (claim)", "2": "results.json (config)"}.get(number, "results.json (end)")
    return f"{kind}, {moment}"


def table(cases: Sequence[Case]) -> str:
    """The campaign's markdown table: kills by moment and signal, exact or not."""
    groups: dict[str, Counter[str]] = {}
    exact: Counter[str] = Counter()
    for case in cases:
        group = moment_group(case)
        groups.setdefault(group, Counter())[case.signal] += 1
        exact[group] += case.exact
    lines = ["| moment | SIGKILL | SIGTERM | SIGINT | exact |", "|---|---|---|---|---|"]
    for group, counts in groups.items():
        total = sum(counts.values())
        cells = [str(counts.get(s, 0) or "—") for s in SIGNAL_NAMES]
        lines.append(f"| {group} | {' | '.join(cells)} | {exact[group]} of {total} |")
    total_exact = sum(case.exact for case in cases)
    lines.append(
        f"| **all** | {sum(c.signal == 'SIGKILL' for c in cases)} | {sum(c.signal == 'SIGTERM' for c in cases)} "
        f"| {sum(c.signal == 'SIGINT' for c in cases)} | **{total_exact} of {len(cases)}** |"
    )
    return "\n".join(lines)


def landed(cases: Sequence[Case]) -> str:
    """Where the random kills landed, by the status the first kill left: before the run claimed its
    directory (no record), while it ran, after it ended."""
    first = [case.launches[0].status for case in cases if case.moment == "random" and case.launches]
    if not first:
        return ""
    counts = Counter(
        "before the claim" if s == "absent" else "after the end" if s == "completed" else "while it ran" for s in first
    )
    parts = [f"{counts[where]} {where}" for where in ("before the claim", "while it ran", "after the end") if counts[where]]
    return f"Random kills landed: {', '.join(parts)} (by the status the first kill left)."


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/kill_campaign.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--random", type=int, default=0, help="random kills (cycling SIGKILL, SIGTERM, SIGINT)")
    parser.add_argument("--targeted", action="store_true", help="a kill at every write event of the uninterrupted run")
    parser.add_argument("--cases", default=None, help="only these cases, e.g. results.json#1:after:SIGKILL,random:SIGINT+")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random moments")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once")
    parser.add_argument("--work-dir", type=Path, default=None, help="where the runs go (default: a temporary folder)")
    parser.add_argument("--out", type=Path, default=None, help="also write the table (and the cases not exact) here")
    args = parser.parse_args(argv)
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="graphbench-kills-"))
    work.mkdir(parents=True, exist_ok=True)
    runner = Runner()
    started = time.perf_counter()
    reference = reference_run(runner, work, args.jobs)
    print(
        f"uninterrupted run: {reference.seconds:.1f} s, {reference.claimed_s:.1f} s of them after the claim, "
        f"{len(reference.events)} write events",
        file=sys.stderr,
        flush=True,
    )
    cases = parse_cases(args.cases) if args.cases else planned_cases(reference, args.targeted, args.random)
    rngs = [random.Random(f"{args.seed}-{i}") for i in range(len(cases))]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_case, runner, case, reference, work, rng) for case, rng in zip(cases, rngs)]
        for i, future in enumerate(futures, 1):
            case = future.result()
            steps = " -> ".join(f"{launch.exit_code}/{launch.status}" for launch in case.launches)
            verdict = "exact" if case.exact else "NOT EXACT: " + "; ".join(case.problems)
            print(f"[{i}/{len(cases)}] {case.name}: {steps}: {verdict}", file=sys.stderr, flush=True)
    minutes = (time.perf_counter() - started) / 60
    text = table(cases) + "\n\n" + landed(cases)
    failures = [f"- {case.name}: {'; '.join(case.problems)}" for case in cases if not case.exact]
    report = "\n".join([text, "", *failures, f"{len(cases)} cases in {minutes:.0f} min, seed {args.seed}"])
    print(report)
    if args.out is not None:
        args.out.write_text(report + "\n")
    if args.work_dir is None and not failures:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if not failures else 1


if __name__ == "__main__":
    raise SystemExit(main())
