"""Malformed recipes through the real CLI: a clear error, exit 1, no traceback, nothing written.

Every file in tests/bad_recipes/ is a recipe with one or more mistakes. Its leading comment lines
say what the error must say:

    # expect: <substring>    one or more (the first line is always one); each must appear on its
                             own `error:` line, and a file with several must get exactly that many
    # xfail: <reason>        a known pipeline bug: the case expects the fixed behaviour
    # needs: test.identity   the recipe uses the pass-through kind that LAUNCHER registers

Every recipe must make `pcg build` and `pcg explain` exit 1 and print only lines
`error: <recipe path as given>: <problem>` (the same lines from both), with no traceback, leaving
every file and folder (exports, cache, the recipe) exactly as it was. Commands run in a subprocess
(`python -m pipeline`, cwd a fresh folder holding a copy of a small good pack built once).

A subprocess costs about a second of interpreter start-up; to keep the module near 30 s on 2 cores:
- `pcg explain recipes/NAME.toml` runs once per recipe;
- `pcg build` runs once over the folder of all recipes, and each test checks its recipe's lines;
- "solo" recipes (xfail: a bug lets them through or crashes the run; needs: the launcher) get a
  `pcg build recipes/NAME.toml` of their own instead;
and all of these start up front on a thread pool (one thread per CPU); each test checks a result.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from conftest import recipe_text

CORPUS = Path(__file__).parent / "bad_recipes"
RECIPES, OUT, CACHE = "recipes", "exports", "cache"  # relative to each run's working folder
TIMEOUT = 120

# Most bad recipes also name their pack "good": if one got past validation it would rebuild these
# files, and the byte-for-byte comparison would catch it.
GOOD_RECIPE = recipe_text(name="good", seed=1, maps=2, cells=(4, 3), scale=1)

# `python -m pipeline` plus one extra stage kind. No built-in kind can close a cycle (generators
# take no input and export stages cannot be inputs), so cycle.toml needs a kind with one input.
LAUNCHER = '''
import runpy
import sys
from typing import ClassVar

from pipeline.registry import StageParams, stage


@stage("test.identity", version=1)
class Identity(StageParams):
    """Pass the input Level on unchanged (registered by tests/test_bad_recipes.py)."""

    arity: ClassVar[tuple[int, int]] = (1, 1)

    def run(self, inputs, rng):
        return inputs[0]


sys.argv[0] = "pcg"
runpy.run_module("pipeline", run_name="__main__", alter_sys=True)
'''
EXTRA_KINDS = {"test.identity"}

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
HEADER = re.compile(r"^#\s*(expect|xfail|needs):\s?(.*?)\s*$")


@dataclass(frozen=True)
class Case:
    path: Path
    first_line: str
    expects: tuple[str, ...]
    xfail: str | None
    needs: str | None

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def arg(self) -> str:
        """The recipe path as given on the command line (and so as every message must start)."""
        return f"{RECIPES}/{self.path.name}"


def _read_case(path: Path) -> Case:
    # Decode leniently: not_utf8.toml is deliberately not UTF-8 past its header.
    lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
    fields: dict[str, list[str]] = {"expect": [], "xfail": [], "needs": []}
    for line in lines:
        if not line.startswith("#"):
            break
        match = HEADER.match(line)
        if match:
            fields[match[1]].append(match[2])
    return Case(
        path=path,
        first_line=lines[0] if lines else "",
        expects=tuple(fields["expect"]),
        xfail=" ".join(fields["xfail"]) or None,
        needs=" ".join(fields["needs"]) or None,
    )


CASES = [_read_case(p) for p in sorted(CORPUS.glob("*.toml"))]


def _param(case: Case):  # type: ignore[no-untyped-def]
    marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
    return pytest.param(case, id=case.path.stem, marks=marks)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    for key in ("FORCE_COLOR", "CLICOLOR_FORCE", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        env.pop(key, None)
    env["NO_COLOR"] = "1"
    env["PYTHONWARNINGS"] = "ignore"  # stderr must hold the problem lines and nothing else
    return env


ENV = _env()


def pcg(args: list[str], cwd: Path, needs: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real command line in a fresh interpreter."""
    if needs is not None and needs not in EXTRA_KINDS:
        raise AssertionError(f"# needs: {needs!r}: the test only provides {sorted(EXTRA_KINDS)}")
    head = [sys.executable, "-c", LAUNCHER] if needs else [sys.executable, "-m", "pipeline"]
    return subprocess.run(
        [*head, *args], cwd=cwd, env=ENV, capture_output=True, text=True,
        encoding="utf-8", errors="replace", timeout=TIMEOUT,
    )


def snapshot(root: Path) -> dict[str, str | None]:
    """sha256 of every file, and None for every folder, under `root`, by relative path."""
    return {
        p.relative_to(root).as_posix(): None if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
    }


def snapshot_diff(before: dict[str, str | None], after: dict[str, str | None]) -> str:
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    return f"added {added}, removed {removed}, changed {changed}"


def problem_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [ANSI.sub("", line).rstrip() for line in result.stderr.splitlines() if line.strip()]


def match_expects(expects: tuple[str, ...], lines: list[str], context: str) -> None:
    """Each expected substring on a line of its own; with several, exactly one line per problem."""
    free = list(lines)
    for expect in sorted(expects, key=len, reverse=True):  # most specific first
        hit = next((line for line in free if expect in line), None)
        assert hit is not None, f"{context}: no line contains {expect!r}; got:\n" + "\n".join(lines)
        free.remove(hit)
    if len(expects) > 1:
        assert not free, f"{context}: {len(expects)} problems expected, one line each; extra lines:\n" + "\n".join(free)


def check_rejected(result: subprocess.CompletedProcess[str], case: Case, command: str) -> list[str]:
    """Exit 1 with one `error: <recipe>: ...` line per problem, and no traceback."""
    context = f"pcg {command} {case.arg}"
    assert "Traceback" not in result.stdout and "Traceback" not in result.stderr, (
        f"{context}: traceback\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    )
    assert result.returncode == 1, f"{context}: exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    lines = problem_lines(result)
    assert lines, f"{context}: exit 1 without a message"
    prefix = f"error: {case.arg}: "
    stray = [line for line in lines if not line.startswith(prefix)]
    assert not stray, f"{context}: every stderr line must be one problem starting with {prefix!r}; not:\n" + "\n".join(stray)
    match_expects(case.expects, lines, context)
    return lines


# -- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def good_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding good.toml, its built pack under exports/ and its cache, built once."""
    root = tmp_path_factory.mktemp("good")
    (root / "good.toml").write_text(GOOD_RECIPE, encoding="utf-8")
    result = pcg(["build", "good.toml", "--out", OUT, "--cache", CACHE, "-j", "1", "-q"], root)
    assert result.returncode == 0, result.stderr
    files = [path for path, digest in snapshot(root / OUT).items() if digest]
    assert "good/manifest.json" in files
    assert {"good/map_000.tmx", "good/map_001.tmx", "good/previews/map_000.png"} <= set(files)
    return root


def fresh_copy(good: Path, work: Path) -> None:
    """The good pack and its cache, copied into `work`, with an empty recipes/ beside them."""
    shutil.copytree(good / OUT, work / OUT)
    shutil.copytree(good / CACHE, work / CACHE)
    (work / RECIPES).mkdir()


@dataclass
class Run:
    """One command in its own working folder, with that folder's snapshot before and after."""

    result: subprocess.CompletedProcess[str]
    before: dict[str, str | None]
    after: dict[str, str | None]

    def unchanged(self, what: str) -> None:
        assert self.after == self.before, f"{what} changed files: {snapshot_diff(self.before, self.after)}"


def run_in(work: Path, args: list[str], needs: str | None = None) -> Run:
    before = snapshot(work)
    result = pcg(args, work, needs)
    return Run(result, before, snapshot(work))


def solo(case: Case) -> bool:
    """Built alone rather than in the folder run: it needs the launcher, or a known bug lets it
    through validation (it would then build, or crash the run, and spoil the other recipes)."""
    return bool(case.xfail or case.needs)


def run_case(case: Case, good: Path, work: Path) -> tuple[Run | None, Run]:
    """`pcg build` (solo cases only) and `pcg explain` of one recipe, on its own copy of the good pack."""
    fresh_copy(good, work)
    shutil.copyfile(case.path, work / case.arg)
    build = run_in(work, ["build", case.arg, "--out", OUT, "--cache", CACHE, "-j", "1"], case.needs) if solo(case) else None
    explain = run_in(work, ["explain", case.arg, "--out", OUT, "--cache", CACHE], case.needs)
    return build, explain


def run_folder(good: Path, work: Path) -> Run:
    """`pcg build recipes/` over every non-solo recipe at once."""
    fresh_copy(good, work)
    for case in CASES:
        if not solo(case):
            shutil.copyfile(case.path, work / case.arg)
    return run_in(work, ["build", RECIPES, "--out", OUT, "--cache", CACHE, "-j", "1"])


@dataclass
class Runs:
    folder: Future[Run]
    cases: dict[str, Future[tuple[Run | None, Run]]]


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, good_pack: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    """The folder build and every selected case's runs, started at once on a thread pool."""
    selected = {
        item.callspec.params["case"].name
        for item in request.session.items
        if isinstance(getattr(getattr(item, "callspec", None), "params", {}).get("case"), Case)
    }
    cases = [c for c in CASES if c.name in selected]  # none if only the folder test runs
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    pool = ThreadPoolExecutor(max_workers=max(1, cpus))
    folder = pool.submit(run_folder, good_pack, tmp_path_factory.mktemp("folder"))
    # Solo cases first: they run two commands each, so the pool ends evenly.
    ordered = sorted(cases, key=lambda c: not solo(c))
    futures = {c.name: pool.submit(run_case, c, good_pack, tmp_path_factory.mktemp(c.path.stem)) for c in ordered}
    yield Runs(folder, futures)
    pool.shutdown(wait=True, cancel_futures=True)


def folder_lines(run: Run) -> dict[str, list[str]]:
    """The folder build's problem lines, by recipe path; checks the run as a whole first."""
    result = run.result
    assert "Traceback" not in result.stdout and "Traceback" not in result.stderr, (
        f"pcg build {RECIPES}: traceback\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    )
    assert result.returncode == 1, f"pcg build {RECIPES}: exit {result.returncode}\n{result.stderr}"
    run.unchanged(f"pcg build {RECIPES}")
    by_recipe: dict[str, list[str]] = {}
    for line in problem_lines(result):
        match = re.match(rf"error: ({RECIPES}/[^:]+\.toml): ", line)
        assert match, f"pcg build {RECIPES}: not a problem line of one recipe: {line!r}"
        by_recipe.setdefault(match[1], []).append(line)
    return by_recipe


# -- tests ----------------------------------------------------------------------------------------


def test_corpus_is_well_formed() -> None:
    assert len(CASES) >= 18, f"only {len(CASES)} recipes in {CORPUS}"
    for case in CASES:
        assert case.first_line.startswith("# expect: ") and case.expects[0], f"{case.name}: first line must be `# expect: <substring>`"
        assert all(case.expects), f"{case.name}: empty `# expect:`"
        assert case.needs in (None, *EXTRA_KINDS), f"{case.name}: unknown `# needs: {case.needs}`"


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_bad_recipe(case: Case, good_pack: Path, runs: Runs) -> None:
    build, explain = runs.cases[case.name].result()
    good_files = snapshot(good_pack / OUT)
    first = build or explain
    copied = {k.removeprefix(f"{OUT}/"): v for k, v in first.before.items() if k.startswith(f"{OUT}/")}
    assert copied == good_files, "the copy of the good pack is not the good pack"

    if build is not None:
        lines = check_rejected(build.result, case, "build")
        build.unchanged(f"pcg build {case.arg}")
    else:
        # Built with the rest of the corpus in one `pcg build recipes/`: the same checks, on this
        # recipe's lines of that run.
        lines = folder_lines(runs.folder.result()).get(case.arg, [])
        assert lines, f"pcg build {RECIPES}: nothing reported for {case.arg}"
        match_expects(case.expects, lines, f"pcg build {RECIPES}: {case.name}")

    explained = check_rejected(explain.result, case, "explain")
    assert explained == lines, "pcg explain must report the same problems as pcg build"
    explain.unchanged(f"pcg explain {case.arg}")


def test_folder_of_bad_recipes(runs: Runs) -> None:
    """`pcg build recipes/` over the corpus: one run reports every recipe, on lines of its own."""
    by_recipe = folder_lines(runs.folder.result())
    assert sorted(by_recipe) == sorted(c.arg for c in CASES if not solo(c))
