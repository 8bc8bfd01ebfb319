"""What a page's notebook runs its experiments with (notebooks.py builds the notebooks).

The notebook's set-up cell calls ``start(setting, reference)``. It pins the
numeric environment (or says it came too late, as on Colab), and it
registers the ``%%section`` cell magic. Each experiment's cell is that magic
followed by the section script's own source, as it is in the repository:

    %%section normalisation_and_stability.residual_placement
    RATES = (0.001, 0.003, 0.01, 0.03)
    ...

The magic runs the cell as that module: the cell replaces the installed
module for the rest of the session, so a later cell that imports it gets the
edited code. It then runs the section through ``cli.run_section`` as
`make figures` does, in the "quick" setting (the tests' reduced configuration
of a heavy section) or the "page" setting (the page's own), and shows:

- every number it printed beside the page's (in the quick setting of a heavy
  section, beside the tests' pinned quick run), with "=" where they agree;
- its time (wall and CPU seconds, worker processes included);
- which of the page's statements (the section's claims) hold for this run;
- the figures it drew.

The result is kept in a variable named after the section: its numbers, the
arrays ``compute`` returned, its figures. When the cell is the page's own
code, in the page setting, a failed statement is an error, raised after
everything is shown. When the reader changed the cell (the tinker mode),
nothing raises: each statement that no longer holds is named with its value.
Outputs go under ``<folder>/<setting>/<page>/`` beside the notebook, never
over the page's committed figures.
"""

from __future__ import annotations

import ast
import json
import linecache
import resource
import sys
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pagekit import numeric_env

NUMERIC_VARIANT = numeric_env.apply_late()  # before numpy loads, or a note that it came too late

from pagekit import cli, inputs, record
from pagekit.paths import NOTEBOOK_RUNS
from pagekit.registry import page_config

SETTINGS = ("quick", "page")
MEASURED = "measured here"  # a timing: differs by machine, compared by no one


@dataclass
class Session:
    setting: str
    reference: dict  # {section: {"page": {...}, "quick": {...}, "heavy": bool}}
    out: Path


_SESSION: Session | None = None


@dataclass
class Experiment:
    """One run of a section in the notebook: what a reader re-plots or inspects."""

    name: str
    setting: str
    changed: bool  # the cell is not the page's own code (the tinker mode)
    numbers: dict[str, Any]  # quote name: its value (a list for a vector)
    results: Any  # what the section's compute returned (its arrays)
    figures: list[Path]
    failed: list[str] = field(default_factory=list)  # the page's statements that do not hold here
    untested: list[str] = field(default_factory=list)
    seconds: float = 0.0
    equal: tuple[int, int] = (0, 0)  # (numbers equal to the reference, numbers compared)

    def __repr__(self) -> str:
        return (
            f"<{self.name}, {self.setting} setting{', changed' if self.changed else ''}: "
            f"{len(self.numbers)} numbers in .numbers, arrays in .results, {len(self.figures)} figures, "
            f"{len(self.failed)} statements not holding>"
        )


def start(setting: str, reference: dict | str, out: str | Path = NOTEBOOK_RUNS) -> None:
    """The notebook's set-up: the setting, the page's numbers to compare with,
    and the ``%%section`` magic."""
    global _SESSION
    if setting not in SETTINGS:
        raise ValueError(f"SETTING must be one of {', '.join(map(repr, SETTINGS))}, not {setting!r}")
    if isinstance(reference, str):
        reference = json.loads(reference)
    _SESSION = Session(setting, reference, Path(out))
    import warnings

    # A run that diverges on purpose (the page's point) overflows: no warning for that.
    warnings.filterwarnings("ignore", "(overflow|invalid value) encountered", RuntimeWarning)
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        shell.register_magic_function(section_magic, magic_kind="cell", magic_name="section")
    pinned = NUMERIC_VARIANT == numeric_env.PINNED and numeric_env.can_honour_pin()
    print(
        f"setting: {setting}; numeric environment: "
        + (
            "pinned (the page's kernels: its numbers should repeat to the last digit)"
            if pinned
            else "not pinned here (library defaults): the last digits may differ from the page's"
        )
    )


def section_magic(line: str, cell: str) -> None:
    """``%%section <package>.<script>``: run the cell as that section script."""
    from IPython import get_ipython

    name = line.strip()
    get_ipython().user_ns[name.rpartition(".")[2]] = run_cell(name, cell)


def load_cell(name: str, source: str) -> types.ModuleType:
    """The cell's code as module ``name`` (in sys.modules, so worker
    processes and later cells find this version of it)."""
    filename = f"<notebook cell: {name}>"
    # Claims read their own condition's source (record.condition_form).
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    module = types.ModuleType(name)
    # Paths a script builds from its own file (its data) resolve as they do in the package.
    module.__file__ = str(installed_script(name))
    code = compile(source, filename, "exec")
    previous = sys.modules.get(name)
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except BaseException:
        if previous is not None:
            sys.modules[name] = previous
        raise
    return module


def installed_script(name: str) -> Path:
    """Where module ``<package>.<script>`` is installed (its page package is imported)."""
    package, _, script = name.rpartition(".")
    return Path(sys.modules[package].__file__).parent / f"{script}.py"


def is_page_code(name: str, source: str) -> bool:
    """Whether the cell means what the repository's script means (comments,
    docstrings and layout aside)."""
    try:
        return inputs.tree_content(ast.parse(source)) == inputs.code_content(installed_script(name))
    except (OSError, SyntaxError):
        return False


# A run's inputs hash (record.Section.inputs_hash) when it is not the repository's code as committed.
CHANGED_HASH = "changed in a notebook"
OUTSIDE_HASH = "installed without the repository"


def repository_hash(package: str, script: str) -> str:
    """The script's inputs hash (section_inputs), where its inputs are at hand
    (a clone); else OUTSIDE_HASH (a package file, without the committed data)."""
    try:
        return inputs.inputs_hash(package, script)
    except (OSError, inputs.InputError):
        return OUTSIDE_HASH


def declared_data(module: types.ModuleType, source: str) -> list[Path]:
    """The data files the cell declares in INPUTS (inputs.declared_inputs), where they would be."""
    return [Path(module.__file__).parent / p for p in inputs.declared_inputs(ast.parse(source))]


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (pool workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_cell(name: str, source: str) -> Experiment | None:
    """Run one section cell in the session's setting and show what it made."""
    if _SESSION is None:
        raise RuntimeError("run the set-up cell first (notebook_kit.start)")
    package, _, script = name.rpartition(".")
    page_config(package)  # imports the page package, or a clear error for an unknown page
    changed = not is_page_code(name, source)
    module = load_cell(name, source)
    setting, reference = _SESSION.setting, _SESSION.reference.get(script, {})
    out_dir = _SESSION.out / setting / page_config(package).PAGE
    missing = [p for p in declared_data(module, source) if not p.exists()]
    if missing:
        # The robustness report's data, say: a clone has it, a package file does not.
        print(
            f"{script} did not run: it reads {', '.join(p.name for p in missing)}, which a clone of the repository has"
        )
        return None
    wall, cpu = time.perf_counter(), cpu_seconds()
    result = cli.run_section(
        module,
        reduced=setting == "quick",
        out_dir=out_dir,
        raise_on_failed_claims=False,
        inputs_hash=CHANGED_HASH if changed else repository_hash(package, script),
    )
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    failed = failed_statements(result)
    experiment = Experiment(
        name=script,
        setting=setting,
        changed=changed,
        numbers={n: q.value for n, q in result.quotes.items()},
        results=result.results,
        figures=[out_dir / f for f in result.figures],
        failed=failed,
        untested=list(result.untested),
        seconds=wall,
    )
    show(experiment, result, reference, wall, cpu)
    record_time(out_dir, script, wall, cpu, experiment)
    if failed and setting == "page" and not changed:
        raise record.ClaimsFailed(f"{script}: the page's own run: claim failed: " + "; claim failed: ".join(failed))
    return experiment


def failed_statements(section: record.Section) -> list[str]:
    """The claims that fail in this run. A reduced run of a heavy section tests
    none (its few steps test the code path); a section without a reduced
    configuration runs the page's sizes in either setting, so its claims count."""
    if section.reduced and section.heavy:
        return []
    return [f"{c.statement} ({c.detail})" if c.detail else c.statement for c in section.claims if not c.holds]


def comparison_rows(section: record.Section, reference: dict, setting: str) -> list[tuple[str, ...]]:
    """(quote, this run, expected, the page's, mark) for every printed number."""
    page = reference.get("page", {})
    expected = reference.get("quick", {}) if setting == "quick" and section.heavy else page
    rows = []
    for quote in section.quotes.values():
        for name, _, text in quote.items():
            if quote.measured:
                rows.append((name, text, MEASURED, page.get(name, ""), ""))
            else:
                want = expected.get(name, "(not on the page)")
                rows.append((name, text, want, page.get(name, ""), "=" if text == want else "≠"))
    return rows


def markdown_table(rows: list[tuple[str, ...]], quick_heavy: bool) -> str:
    expected = "pinned quick run" if quick_heavy else "the page"
    lines = [
        f"| quote | this run | {expected} | " + ("the page (full run) |" if quick_heavy else "|"),
        "|---|---|---|" + ("---|" if quick_heavy else "") + "---|",
    ]
    for name, text, want, page, mark in rows:
        cells = [name, text, want] + ([page] if quick_heavy else []) + [mark]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def show(experiment: Experiment, section: record.Section, reference: dict, wall: float, cpu: float) -> None:
    from IPython.display import SVG, Markdown, display

    quick_heavy = experiment.setting == "quick" and section.heavy
    rows = comparison_rows(section, reference, experiment.setting)
    experiment_equal = sum(1 for row in rows if row[4] == "=")
    compared = sum(1 for row in rows if row[4])
    against = "the tests' pinned quick run" if quick_heavy else "the page"
    print(
        f"{experiment.name} ({experiment.setting} setting{', your changes' if experiment.changed else ''}): "
        f"{wall:.1f} s wall, {cpu:.1f} s CPU; {experiment_equal} of {compared} numbers equal {against}'s"
    )
    if quick_heavy:
        print("the page's statements are about its own configuration: SETTING = 'page' tests them")
    else:
        held = sum(1 for c in section.claims if c.holds)
        whose = "your settings" if experiment.changed else "this run"
        print(f"{held} of {len(section.claims)} of the page's statements hold for {whose}")
        for statement in experiment.failed:
            print(f"  the page's statement does not hold for {whose}: {statement}")
        for note in experiment.untested:
            print(f"  {note}")
    display(Markdown(markdown_table(rows, quick_heavy)))
    for path in experiment.figures:
        display(SVG(filename=str(path)))
    print(f"(numbers, arrays and figures: the variable `{experiment.name}`)")
    experiment.equal = (experiment_equal, compared)


def record_time(out_dir: Path, script: str, wall: float, cpu: float, experiment: Experiment) -> None:
    """Each experiment's time and agreement, for `make notebook-times`."""
    from pagekit import atomic

    path = out_dir / "notebook_timings.json"
    timings = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    equal, compared = experiment.equal
    timings[script] = {"wall": round(wall, 2), "cpu": round(cpu, 2), "equal": equal, "compared": compared}
    atomic.write_json_atomically(path, timings)
