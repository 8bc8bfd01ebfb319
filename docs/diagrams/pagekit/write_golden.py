"""`make golden`: pin the current results of every page on purpose.

For every section: its quotes, claims and agreement gaps from
figures/<page>/numbers/<section>.json (the page's own run), the sha256 of its
committed figures, and, for a heavy section, the same of its reduced
configuration (rerun here, in parallel; the tests run it). For every page:
which quote each prose number is, in order (tests/golden/<page>/page.json).
Run it only after inspecting the new numbers, figures and prose. It shows
what it re-pins, one line per change with the old and the new (a quote's text
or value beyond its tolerance, a claim or its condition, a figure, a prose
number's bound quote), and how many; nothing changed, it says only that.
Last-bit noise from another machine is not a change.

Every bound of a claim that moved is shown (golden.bound_moves: a constant's
value, a number in the condition, a comparison made strict or not), and a
section where one moved so that its claim is easier to hold (away from the
measured value) is not re-pinned, unless `--accept-looser-bounds REASON`
says why; the reason is printed with the moves it accepts. Likewise a
figure whose panel title or legend label now stands over data that had other
words, the data unchanged (golden.relabelled: two labels swapped in a script),
is not re-pinned unless `--accept-relabel REASON`. `--dry-run` shows what
would be re-pinned and writes nothing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pagekit import check_page
from pagekit.check_page import PageError
from pagekit.paths import REPO_ROOT, golden_dir
from pagekit.golden import (
    BoundMove,
    binding_differences,
    bound_moves,
    differences,
    pinned_part,
    relabelled,
    sha256,
)
from pagekit.registry import page_config
from pagekit.executor import Job
from pagekit.run_sections import all_sections, current_hash, run_many


def load(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def show(path: Path, changes: list[str]) -> None:
    """One file's re-pinned changes, one per line, old -> new."""
    print(f"{path.relative_to(REPO_ROOT)}: {len(changes)} change(s)")
    for change in changes:
        print(f"  {change}")


def looser_refusal(path: Path, moves: list[BoundMove], reason: str | None) -> str | None:
    """Why the golden record at ``path`` is not re-pinned (a bound moved so
    its claim is easier to hold, and no reason accepts it), or None."""
    looser = [m for m in moves if m.looser]
    if not looser or reason:
        return None
    return (
        f"{path.relative_to(REPO_ROOT)} not re-pinned: {len(looser)} claim bound(s) moved so the claim is "
        "easier to hold (away from the measured value):\n"
        + "".join(f"  {m.line()}\n" for m in looser)
        + "if that is intended, say why: .venv/bin/python -m pagekit.write_golden --accept-looser-bounds 'REASON'"
    )


def relabel_refusal(path: Path, relabels: list[str], reason: str | None) -> str | None:
    """Why ``path`` is not re-pinned: a figure's title or legend label moved
    to other data that did not change (two labels swapped in a script); None
    when nothing moved or the author gave a reason."""
    if not relabels or reason:
        return None
    return (
        f"{path.relative_to(REPO_ROOT)} not re-pinned: {len(relabels)} figure title(s) or label(s) now stand over "
        "data that had other words, and the data did not change:\n"
        + "".join(f"  {line}\n" for line in relabels)
        + "if that is intended, say why: .venv/bin/python -m pagekit.write_golden --accept-relabel 'REASON'"
    )


def main(argv: list[str] | None = None) -> int:
    import argparse

    from pagekit.registry import PageNameError
    from pagekit.run_sections import resolve_pages
    from pagekit.atomic import write_json_atomically as write

    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--page", action="append", default=[], help="only this page (slug or package)")
    parser.add_argument(
        "--accept-looser-bounds",
        metavar="REASON",
        default=None,
        help="re-pin claim bounds that moved so their claims are easier to hold, for this reason (printed)",
    )
    parser.add_argument(
        "--accept-relabel",
        metavar="REASON",
        default=None,
        help="re-pin figures whose titles or legend labels moved to other, unchanged data, for this reason (printed)",
    )
    parser.add_argument("--dry-run", action="store_true", help="show what would be re-pinned; write nothing")
    args = parser.parse_args(argv)
    if args.accept_looser_bounds is not None and not args.accept_looser_bounds.strip():
        parser.error("--accept-looser-bounds needs a reason")
    if args.accept_relabel is not None and not args.accept_relabel.strip():
        parser.error("--accept-relabel needs a reason")

    def write_json_atomically(path: Path, data: dict) -> None:
        if not args.dry_run:
            write(path, data)

    try:
        packages = resolve_pages([p for p in args.page if p])
    except PageNameError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    scripts = all_sections(packages)
    records = {}
    for script in scripts:
        path = script.numbers_path
        try:
            records[script] = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            print(f"error: {path.relative_to(REPO_ROOT)} is missing: run `make figures` first", file=sys.stderr)
            return 2
        if records[script].get("inputs_hash") != current_hash(script):
            print(
                f"error: {path.relative_to(REPO_ROOT)} is stale for its inputs: run `make figures` first",
                file=sys.stderr,
            )
            return 2
    heavy = [s for s in scripts if records[s].get("heavy")]
    reduced = {}
    if heavy:
        print(f"running the reduced configuration of {', '.join(s.name for s in heavy)}", flush=True)
        for r in run_many([Job(s, figures=False, write=False, reduced=True) for s in heavy]):
            if not r["ok"]:
                print(f"error: {r['script'].name} (reduced) failed: {r['error']}", file=sys.stderr)
                return 1
            reduced[r["script"]] = r["record"]

    changed_total, files, status, refused = 0, 0, 0, 0
    for script in scripts:
        record = records[script]
        golden_path = golden_dir(script.page) / f"{script.name}.json"
        new = pinned_part(record)
        new["figures"] = {name: sha256(script.numbers_path.parent.parent / name) for name in record["figures"]}
        if script in reduced:
            new["reduced"] = pinned_part(reduced[script])
        old = load(golden_path)
        changes = differences(old, new) if old else ["new golden record"]
        changes += [
            f"figure {n}: sha256 {old.get('figures', {}).get(n, 'none')[:12]} -> {h[:12]}"
            for n, h in new["figures"].items()
            if old and old.get("figures", {}).get(n) != h
        ]
        changes += [f"figure {n} removed" for n in old.get("figures", {}) if n not in new["figures"]]
        if "reduced" in new:
            changes += [f"reduced: {c}" for c in differences(old.get("reduced", {}), new["reduced"])]
        moves = bound_moves(old.get("claims", []), record["claims"]) if old else []
        changes += [m.line() for m in moves]
        relabels = relabelled(old.get("figure_labels", {}), new["figure_labels"]) if old else []
        changes += relabels
        if changes:
            refusal = looser_refusal(golden_path, moves, args.accept_looser_bounds) or relabel_refusal(
                golden_path, relabels, args.accept_relabel
            )
            show(golden_path, changes)
            if refusal:
                print(f"error: {refusal}", file=sys.stderr)
                status, refused = 1, refused + 1
                continue
            if any(m.looser for m in moves):
                print(f"  looser bound(s) accepted: {args.accept_looser_bounds}")
            if relabels:
                print(f"  moved figure words accepted: {args.accept_relabel}")
            write_json_atomically(golden_path, new)
            changed_total += len(changes)
            files += 1

    for package in packages:
        config = page_config(package)
        try:
            binding = check_page.pinned_binding(config)
        except PageError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        path = golden_dir(config.PAGE) / "page.json"
        unbound = [e for e in binding["numbers"] if not e["quotes"]]
        if unbound:  # pinning them would make a stale number look intended
            print(
                f"error: {path.relative_to(REPO_ROOT)} not re-pinned: {len(unbound)} prose number(s) of "
                f"{config.PAGE_FILE} are no quote (section {unbound[0]['section']}: {unbound[0]['token']!r}, ...); "
                f"`make check` names them",
                file=sys.stderr,
            )
            status = 1
            continue
        old = load(path)
        if old != binding:
            changes = binding_differences(old, binding) or ["re-written (same numbers and quotes)"]
            write_json_atomically(path, binding)
            show(path, changes)
            changed_total += len(changes)
            files += 1
    if changed_total:
        done = "would be re-pinned (dry run: nothing written)" if args.dry_run else "re-pinned"
        print(f"golden record: {changed_total} change(s) {done} in {files} file(s)")
    elif not refused:
        print("golden record: nothing changed")
    if refused:
        print(f"golden record: {refused} file(s) not re-pinned: a claim bound moved so its claim is easier to hold")
    return status


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    import os

    os._exit(status)
