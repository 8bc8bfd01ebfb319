"""`make bench`: time the author's loop against the project's budgets.

Times each section script run alone (a fresh interpreter, as an author runs
it), the whole `make -B -j figures` (every section regenerated; the same work
as from clean), `make figures` with nothing changed, and `make check`. Each is
the median of several runs; the table ends with the budgets from DESIGN.md.
Figures are rewritten with identical bytes, so the working tree is unchanged.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run_sections import REPO_ROOT, all_sections

BUDGETS = {  # seconds, on the project's 2-core machines
    "make -B -j figures": 5.0,
    "make figures (nothing changed)": 0.3,
    "make check": 1.0,
}


def median_wall(command: list[str], repeats: int, cwd: Path = REPO_ROOT) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"error: {' '.join(command)} failed:\n{done.stdout}{done.stderr}")
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement (default 3)")
    args = parser.parse_args(argv)
    python = sys.executable
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for script in all_sections():
            seconds = median_wall(
                [python, str(script.path), "--quiet", "--out-dir", str(Path(scratch) / script.name)],
                args.repeats,
            )
            rows.append((f"{script.name}.py alone", seconds))
    rows.append(("make -B -j figures", median_wall(["make", "-s", "-B", "-j", "figures"], args.repeats)))
    rows.append(("make figures (nothing changed)", median_wall(["make", "-s", "figures"], args.repeats + 2)))
    rows.append(("make check", median_wall(["make", "-s", "check"], args.repeats + 2)))

    print(f"| what | median wall of {args.repeats}+ runs | budget |")
    print("|---|---|---|")
    over = 0
    for what, seconds in rows:
        budget = BUDGETS.get(what)
        verdict = ""
        if budget is not None:
            verdict = f"< {budget:g} s " + ("met" if seconds < budget else "**MISSED**")
            over += seconds >= budget
        print(f"| {what} | {seconds:.2f} s | {verdict} |")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
