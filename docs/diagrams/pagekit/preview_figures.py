"""`make preview`: render every figure to PNG, to look at before committing.

Renders figures/<page>/<name>.svg to build/preview/<page>/<name>.png with
cairosvg, 1000 pixels wide, one line per figure as it goes and a one-line
summary at the end. `--page <slug>` limits it to one page (repeatable).
PNGs of figures that no longer exist are removed, so the folder shows only
the current figures. Errors are one line each; a figure that cannot be
rendered does not stop the others, and the exit status is 1 if any failed
(2 for bad input: an unknown page, no figures).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from pagekit.paths import FIGURES_DIR, REPO_ROOT
from pagekit.registry import page_config, page_packages, rel_path

PREVIEW_DIR = REPO_ROOT / "build" / "preview"
WIDTH = 1000  # pixels: about a page's width on screen

EXIT_FAILED, EXIT_BAD_INPUT = 1, 2


rel = rel_path


def page_folders(names: list[str]) -> list[Path]:
    """The figures folders to render: every page's, or the named pages'
    (by slug, as in figures/<slug>/, or by page package)."""
    folders = sorted(p for p in FIGURES_DIR.glob("*") if p.is_dir())
    if not names:
        return folders
    by_name = {p.name: p for p in folders}
    for package in page_packages():
        slug = page_config(package).PAGE
        by_name.setdefault(slug, FIGURES_DIR / slug)
        by_name[package] = FIGURES_DIR / slug
    unknown = [n for n in names if n not in by_name]
    if unknown:
        known = sorted({page_config(p).PAGE for p in page_packages()} | {p.name for p in folders})
        raise LookupError(f"no page named {', '.join(map(repr, unknown))} (pages: {', '.join(known)})")
    return sorted({by_name[n] for n in names})


def render(svg: Path, png: Path, cairosvg) -> None:
    """Render one SVG; the PNG is written whole or not at all."""
    data = cairosvg.svg2png(url=str(svg), output_width=WIDTH)
    png.parent.mkdir(parents=True, exist_ok=True)
    tmp = png.with_name(f".{png.name}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, png)
    finally:
        tmp.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument(
        "--page",
        action="append",
        default=[],
        help="only this page (slug or page package; repeatable; default every page)",
    )
    args = parser.parse_args(argv)
    try:
        import cairosvg
    except ImportError as error:
        print(f"error: cannot import cairosvg ({error}); run `make venv` to install requirements.txt", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        folders = page_folders([p for p in args.page if p])
    except LookupError as error:
        print(f"error: {error.args[0]}", file=sys.stderr)
        return EXIT_BAD_INPUT
    figures = [svg for folder in folders for svg in sorted(folder.glob("*.svg"))]
    if not figures:
        where = ", ".join(rel(f) for f in folders) or rel(FIGURES_DIR)
        print(f"error: no SVG figures in {where}; run `make figures` first", file=sys.stderr)
        return EXIT_BAD_INPUT

    start = time.perf_counter()
    failed = []
    width = len(str(len(figures)))
    for i, svg in enumerate(figures, 1):
        png = PREVIEW_DIR / svg.parent.name / f"{svg.stem}.png"
        began = time.perf_counter()
        try:
            render(svg, png, cairosvg)
        except OSError as error:
            failed.append(svg)
            print(
                f"[{i:>{width}}/{len(figures)}] FAILED {rel(svg)}: cannot write "
                f"{rel(Path(error.filename)) if error.filename else rel(png)} ({error.strerror})",
                file=sys.stderr,
                flush=True,
            )
            continue
        except Exception as error:
            failed.append(svg)
            detail = str(error).strip().splitlines()
            print(
                f"[{i:>{width}}/{len(figures)}] FAILED {rel(svg)}: {type(error).__name__}"
                f"{': ' + detail[0] if detail else ''}",
                file=sys.stderr,
                flush=True,
            )
            continue
        print(f"[{i:>{width}}/{len(figures)}] {rel(png)}  {time.perf_counter() - began:.1f} s", flush=True)

    current = {PREVIEW_DIR / svg.parent.name / f"{svg.stem}.png" for svg in figures}
    removed = 0
    for folder in folders:
        for old in (PREVIEW_DIR / folder.name).glob("*.png"):
            if old not in current:
                old.unlink(missing_ok=True)
                removed += 1

    took = time.perf_counter() - start
    done = len(figures) - len(failed)
    summary = f"rendered {done} of {len(figures)} figure(s) into {rel(PREVIEW_DIR)}/ in {took:.1f} s"
    if removed:
        summary += f" (removed {removed} PNG(s) of figures that no longer exist)"
    if failed:
        print(f"{summary}; FAILED: {', '.join(rel(f) for f in failed)}", file=sys.stderr)
        return EXIT_FAILED
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
