"""Running one section: in process (the runner, the tests, the robustness
report) or from its command line (``python <script>.py [--seed-offset K]``)."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from pathlib import Path

from pagekit import inputs, numeric_env

numeric_env.applied_variant()  # before numpy loads

from pagekit.figure_bounds import FigureBoundsError
from pagekit.record import ClaimsFailed, QuoteError, Section
from pagekit.registry import page_config, rel_path

SEED_OFFSET_ENV = "SEED_OFFSET"


# Running a section: in-process (tests, seed report) or from the command line.


def section_module(page_package: str, section: str):
    """Import ``docs/diagrams/<page_package>/<section>.py`` as a module."""
    page_config(page_package)
    return importlib.import_module(f"{page_package}.{section}")


def new_section(
    module,
    *,
    seed_offset: int = 0,
    out_dir: Path | str | None = None,
    echo: bool = False,
    reduced: bool = False,
    inputs_hash: str | None = None,
) -> Section:
    """A fresh Section for one run of a section module (its page from the
    module's package; ``inputs_hash`` by default the inputs' hash now)."""
    package, _, name = module.__name__.rpartition(".")
    if inputs_hash is None and getattr(module, "__file__", None):  # (a test's stand-in module has no file)
        inputs_hash = inputs.inputs_hash(package, name)
    return Section(
        page=page_config(package).PAGE,
        name=name,
        seed_offset=seed_offset,
        out_dir=Path(out_dir) if out_dir is not None else None,
        echo=echo,
        reduced=reduced,
        inputs_hash=inputs_hash,
    )


def run_section(
    module,
    *,
    seed_offset: int = 0,
    figures: bool = True,
    out_dir: Path | str | None = None,
    echo: bool = False,
    write: bool = True,
    raise_on_failed_claims: bool = True,
    reduced: bool = False,
    inputs_hash: str | None = None,
    run_results: list | None = None,
) -> Section:
    """Run one section module's ``compute`` (and ``draw`` if ``figures``).

    A module that declares independent runs (``independent_runs(section)``: function and
    arguments pairs) gets their results as ``compute(section, results)``:
    ``run_results`` when the scheduler ran them (executor.run_jobs), else
    they run here (executor.run_here).

    Writes the numbers file when ``write`` (into figures/ only for the
    page's own run, see ``Section.figure_dir``); raises ``ClaimsFailed``
    naming every failed claim unless ``raise_on_failed_claims`` is off
    (robustness report). A section whose claims fail writes no numbers file.
    ``inputs_hash`` is the hash of the inputs as they were when the run was
    decided (the runner hashes before it imports); by default, now.
    """
    section = new_section(
        module, seed_offset=seed_offset, out_dir=out_dir, echo=echo, reduced=reduced, inputs_hash=inputs_hash
    )
    keep_measurements(section)
    if hasattr(module, "independent_runs"):
        if run_results is None:
            from pagekit import executor

            run_results = executor.run_here(list(module.independent_runs(section)))
        results = module.compute(section, run_results)
    else:
        results = module.compute(section)
    section.results = results
    failed = section.failed_claims()
    if failed and raise_on_failed_claims:
        raise ClaimsFailed(f"{section.name}: claim failed: " + "; claim failed: ".join(failed))
    if figures:
        module.draw(section, results)
    if write:
        section.write_numbers()
    return section


def keep_measurements(section: Section) -> None:
    """On the page's own run into figures/, reuse the committed measurements
    when they were made for the same inputs (unless $REMEASURE is set)."""
    if not section.is_page_run or section.out_dir is not None or os.environ.get("REMEASURE"):
        return
    try:
        committed = json.loads(section.numbers_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(committed, dict) or committed.get("inputs_hash") != section.inputs_hash:
        return
    section.kept_measurements = {
        n: q for n, q in committed.get("quotes", {}).items() if isinstance(q, dict) and q.get("measured")
    }
    section.measured_on = committed.get("measured_on")


def main(module_name: str) -> None:
    """Command line of a section script: ``python <script>.py [--seed-offset K]``."""
    module = sys.modules[module_name]
    if module_name == "__main__":
        # Re-import under the package name so quotes know their page.
        path = Path(module.__file__).resolve()
        module = section_module(path.parent.name, path.stem)
    parser = argparse.ArgumentParser(description=(module.__doc__ or "").strip().splitlines()[0])
    parser.add_argument(
        "--seed-offset",
        type=int,
        default=None,
        help=f"shift every seed by K (default: ${SEED_OFFSET_ENV} or 0)",
    )
    parser.add_argument(
        "--no-figures",
        action="store_true",
        help="compute and print only (writes no numbers file unless --out-dir is given)",
    )
    parser.add_argument("--out-dir", type=Path, help="write figures and numbers here instead")
    parser.add_argument(
        "--reduced",
        action="store_true",
        help="the tests' reduced configuration of a heavy section (written under build/)",
    )
    parser.add_argument("--quiet", action="store_true", help="do not print the quotes")
    args = parser.parse_args()
    if args.seed_offset is None:
        try:
            args.seed_offset = int(os.environ.get(SEED_OFFSET_ENV) or 0)
        except ValueError:
            parser.error(f"${SEED_OFFSET_ENV} must be a whole number, got {os.environ[SEED_OFFSET_ENV]!r}")
    try:
        section = run_section(
            module,
            seed_offset=args.seed_offset,
            figures=not args.no_figures,
            out_dir=args.out_dir,
            echo=not args.quiet,
            # A numbers file must list the figures drawn with it: without
            # figures, write one only into a separate --out-dir.
            write=not args.no_figures or args.out_dir is not None,
            reduced=args.reduced,
        )
    except (ClaimsFailed, QuoteError, FigureBoundsError, inputs.InputError) as error:
        sys.exit(f"error: {error}")
    except OSError as error:
        sys.exit(f"error: cannot write {error.filename or 'the outputs'}: {error.strerror}")
    if not section.is_page_run and (not args.no_figures or args.out_dir is not None):
        print(
            f"note: not the page's own run (seed offset {section.seed_offset}, variant "
            f"{section.variant}{', reduced' if section.reduced else ''}): wrote under "
            f"{rel_path(section.figure_dir)}, not figures/",
            file=sys.stderr,
        )
    # Everything is written: skip the interpreter's teardown, which takes
    # most of a second once torch is loaded.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
