"""Shared fixtures: every section of every page computed ONCE per test session,
in parallel forked workers (the runner's own machinery), figures written to a
scratch folder so the working tree is untouched.

A light section runs as the page's run (its claims asserted, its figures
compared byte for byte with the golden hashes). A heavy section (one with a
reduced configuration, see Section.choose) runs its reduced configuration:
a handful of steps through the same code, pinned in the golden record, while
its committed full-run numbers are checked for currency by content hash.

On a machine that cannot honour the numeric pin (numeric_env.can_honour_pin),
or whose kernels round differently from those that made the committed numbers
(kernel_fingerprint: `make doctor`), the bit-level checks, raw values at tight tolerance and SVG bytes, cannot
hold: they skip with one reason naming the machine (skip_bit_level), and the
texts are compared only for the quotes the robustness report found stable
under every numeric variant (rounding_stable). Everything else still runs.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

from pagekit import kernel_fingerprint
from pagekit import numeric_env
import pagekit.section  # noqa: F401  (pins the numeric environment)
from pagekit.paths import golden_dir
from pagekit.registry import page_config
from pagekit.executor import Job
from pagekit.run_sections import all_sections, current_hash, run_many

# The machinery is installed in place (pip install -e .); pytest puts tests/ on the path (conftest, helpers).
REPO_ROOT = Path(__file__).resolve().parents[1]


def _artifacts_dir() -> Path:
    """Where tests leave pictures to look at (screenshots, figure diffs):
    $TEST_ARTIFACTS_DIR or build/test-artifacts/; on a read-only checkout, a
    temporary folder instead, so the suite still passes there."""
    wanted = Path(os.environ.get("TEST_ARTIFACTS_DIR") or REPO_ROOT / "build" / "test-artifacts")
    try:
        wanted.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=wanted):  # it may exist and still be read-only
            pass
        return wanted
    except OSError:
        return Path(tempfile.mkdtemp(prefix="test-artifacts-"))


TEST_ARTIFACTS = _artifacts_dir()

# Property tests draw the same cases on every run (CI is deterministic) and
# write no example database into the tree.
settings.register_profile("repository", derandomize=True, database=None, deadline=None, max_examples=200)
settings.load_profile("repository")

# Time limits (pytest-timeout; the default of 60 s is in pyproject.toml).
# The first test to ask for `regenerated` also pays for computing every
# section (about 35 s on a loaded 2-core machine).
SLOW_TEST_TIMEOUT = 240
SESSION_FIXTURE_TIMEOUT = 600


# `make test` runs on two xdist workers (pyproject.toml: -n 2 --dist loadgroup).
# A test whose set-up is expensive and shared (the session's regenerated
# sections, a module's built site or executed notebooks) runs on the worker
# that holds that set-up: each such set-up is one xdist_group, built once
# (marked here, at collection, so no test file has to remember it). On a
# worker the groups go first, longest first, so both workers start on them
# and the short tests fill in after.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
# The notebooks' runs (a fresh environment, then the notebooks) go first:
# their child processes work beside every other test.
MODULE_UNITS = {"test_notebooks": "notebooks", "test_site": "site", "test_page_snippet": "page-snippet"}
UNIT_ORDER = ("notebooks", "regenerated", "site")


def xdist_unit_of(item) -> str | None:
    """The set-up a test shares with others (so they run on one worker), if any."""
    if "regenerated" in getattr(item, "fixturenames", ()):
        return "regenerated"
    module = getattr(item, "module", None)
    return MODULE_UNITS.get(module.__name__) if module else None


def pytest_itemcollected(item):
    """Mark each test with its group as it is collected: before xdist reads
    the marks (its pytest_collection_modifyitems)."""
    if unit := xdist_unit_of(item):
        item.add_marker(pytest.mark.xdist_group(unit))


def _xdist_rank(item) -> tuple[int, int]:
    unit = xdist_unit_of(item)
    order = UNIT_ORDER.index(unit) if unit in UNIT_ORDER else len(UNIT_ORDER)
    # within a unit, the tests that start child processes come first (the notebooks'
    # kernels): the children run beside the rest of the unit
    starts_children = "executed" in getattr(item, "fixturenames", ())
    return order, 0 if starts_children else 1


@pytest.hookimpl(trylast=True)  # after deselection, on the final order
def pytest_collection_modifyitems(items):
    if XDIST_WORKER:  # the same order on every worker (xdist checks it)
        items.sort(key=_xdist_rank)  # stable: the collection's order within a group and among the rest
    first_to_regenerate = next((item for item in items if "regenerated" in item.fixturenames), None)
    for item in items:
        if item.get_closest_marker("timeout"):
            continue
        if item is first_to_regenerate:
            item.add_marker(pytest.mark.timeout(SESSION_FIXTURE_TIMEOUT))
        elif item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.timeout(SLOW_TEST_TIMEOUT))


SECTIONS = all_sections()


def page_ids(packages) -> list[str]:
    """Test ids for parameters that are page packages: the page's slug, so
    `pytest -k <page>` (make test PAGE=<page>) selects them."""
    return [page_config(package).PAGE for package in packages]


# "<page>/<section>": two pages may both have a section of one name, and
# `pytest -k <page>` (make test PAGE=<page>) selects a page's section tests.
SECTION_IDS = [f"{s.page}/{s.name}" for s in SECTIONS]
# Whether this machine reproduces the committed bits: it honours the numeric
# pin and its kernel fingerprint equals the committed one (kernel_fingerprint,
# probed once per machine and package set, then cached under build/).
FOREIGN_KERNELS = kernel_fingerprint.mismatch_reason()
PIN_HOLDS = FOREIGN_KERNELS is None
if FOREIGN_KERNELS and numeric_env.can_honour_pin():  # the sections run here say so in their records
    os.environ[numeric_env.FOREIGN_KERNELS_ENV] = FOREIGN_KERNELS
# One reason for every bit-level skip, so the summary names the machine once.
BIT_LEVEL_SKIP = f"bit-level check (raw values at tight tolerance, SVG bytes, the pin itself): {FOREIGN_KERNELS}"


def skip_bit_level() -> None:
    """Skip a check that only holds under the pinned kernels, here."""
    if not PIN_HOLDS:
        pytest.skip(BIT_LEVEL_SKIP)


def rounding_stable(run: "SectionRun", name: str) -> bool:
    """Whether a quote's text can be compared on this machine: anywhere under
    the pin; elsewhere only if the robustness report found its text the same
    at seed 0 under every numeric variant (a quote it does not list is not)."""
    if PIN_HOLDS:
        return True
    path = run.committed_dir / "robustness.json"
    try:
        texts = json.loads(path.read_text(encoding="utf-8"))["sections"][run.name]["quotes"][name]["text"]
    except (OSError, ValueError, KeyError):
        return False
    at_seed_zero = [text for label, text in texts.items() if label == "seed 0" or not label.startswith("seed ")]
    return len(at_seed_zero) > 1 and all(text == at_seed_zero[0] for text in at_seed_zero)


class SectionRun:
    """One regenerated section: its numbers record, or the error it raised."""

    def __init__(self, script, result: dict, out_dir: Path, reduced: bool):
        self.script = script
        self.package, self.name = script.package, script.name
        self.config = page_config(script.package)
        self.out_dir = out_dir / self.config.PAGE
        self.committed_dir = REPO_ROOT / "figures" / self.config.PAGE
        self.reduced = reduced
        self.result = result

    def get(self) -> dict:
        if not self.result["ok"]:
            pytest.fail(f"{self.name} failed:\n{self.result['error']}", pytrace=False)
        return self.result["record"]

    @property
    def committed(self) -> dict:
        path = self.committed_dir / "numbers" / f"{self.name}.json"
        if not path.exists():
            pytest.fail(f"{path.relative_to(REPO_ROOT)} is missing: run `make figures`", pytrace=False)
        return json.loads(path.read_text(encoding="utf-8"))

    @property
    def golden(self) -> dict:
        path = golden_dir(self.config.PAGE) / f"{self.name}.json"
        if not path.exists():
            pytest.fail(
                f"{path.relative_to(REPO_ROOT)} is missing: inspect the numbers, then `make golden`", pytrace=False
            )
        record = json.loads(path.read_text(encoding="utf-8"))
        if self.reduced:  # the reduced run's pins, with the full run's figure hashes
            return {**record.get("reduced", {}), "figures": record.get("figures", {})}
        return record


def is_heavy(script) -> bool:
    """Heavy sections say so in their committed numbers (they called choose)."""
    path = REPO_ROOT / "figures" / page_config(script.package).PAGE / "numbers" / f"{script.name}.json"
    try:
        return bool(json.loads(path.read_text(encoding="utf-8")).get("heavy"))
    except (OSError, ValueError):
        return False


def runs_notebooks(session) -> bool:
    """Whether this session executes the pages' notebooks (their slow test is selected)."""
    return any(
        item.module.__name__ == "test_notebooks" and item.get_closest_marker("slow")
        for item in session.items
        if getattr(item, "module", None)
    )


def selected_sections(session) -> list:
    """The sections this session's tests ask for: each test of one section
    (the ``run`` fixture) asks for its own; a test that reads the fixture
    ``regenerated`` itself asks for all of them."""
    wanted = set()
    for item in session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "run" in callspec.params:
            wanted.add(callspec.params["run"])
        elif "regenerated" in getattr(item, "fixturenames", ()):
            return SECTIONS
    return [script for script in SECTIONS if script in wanted]


@pytest.fixture(scope="session")
def regenerated(request, tmp_path_factory) -> dict[tuple[str, str], SectionRun]:
    """Every section's run for the tests: the reduced configuration of a heavy
    section, the page's own of the others, at seed offset 0, figures drawn,
    in forked workers, as make figures runs them. Only the sections the
    session's tests ask for are run (selected_sections); keyed by (package, section)."""
    runs, jobs = {}, []
    out = tmp_path_factory.mktemp("figures")
    wanted = selected_sections(request.session)
    for script in wanted:
        page_out = out / page_config(script.package).PAGE
        jobs.append(Job(script, out_dir=str(page_out), inputs_hash=current_hash(script), reduced=is_heavy(script)))
    for job, result in zip(jobs, run_many(jobs), strict=True):
        runs[(job.script.package, job.script.name)] = SectionRun(job.script, result, out, job.reduced)
    return {(script.package, script.name): runs[(script.package, script.name)] for script in wanted}


@pytest.fixture(params=SECTIONS, ids=SECTION_IDS)
def run(request, regenerated) -> SectionRun:
    return regenerated[(request.param.package, request.param.name)]


def pytest_sessionfinish(session) -> None:
    """No notebook run outlives the session (test_notebooks.start_executing)."""
    if "test_notebooks" in sys.modules:
        sys.modules["test_notebooks"].stop_executing()


def pytest_collection_finish(session) -> None:
    """Unless on an xdist worker: start the pages' notebooks executing
    (tests/test_notebooks.py) as soon as the tests are known, in child
    processes, so their kernels run beside the other tests instead of after
    them (on a worker, the notebooks' own worker starts them: their tests
    come first there).

    And freeze what collection imported (torch, matplotlib, the modules):
    the garbage collector skips it from now on, so its full passes (pytest's
    own at the end of a session took 0.7 s a process) scan only what the
    tests make, and forked workers share those pages untouched."""
    gc.freeze()
    if XDIST_WORKER:
        return
    if session.config.option.collectonly:
        return
    if runs_notebooks(session):
        import test_notebooks

        test_notebooks.start_executing()
