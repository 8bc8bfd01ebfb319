"""Each page's notebook, built from its section scripts (`make notebooks`).

The notebook reruns the page's experiments in the page's order with the
page's own code, and holds no machinery: its first cell installs the
project's package (``pagekit`` with the page packages beside it: from the
clone around the notebook, else from the package file published with the
page) with numpy, matplotlib and torch at the versions that made the page's
numbers. Each experiment is one editable cell: ``%%section <package>.<script>``
(notebook_kit's cell magic) followed by the section script's source as it
is in the repository, its docstring shown above it as text. The page's
numbers to compare with are one folded cell of data.

The setting cell chooses "quick" (the tests' reduced configuration of every
heavy section) or "page" (the page's own configuration); a reader who edits
a cell is in the tinker mode (notebook_kit).

Built with nbformat, never edited by hand: the notebook is a function of
its inputs (the scripts, the page's headings and code blocks, the committed
numbers, the golden record, the timings, the pins and this script), whose
hash it records, so `make notebooks` with nothing changed rewrites nothing
and a test fails when the committed notebook differs from a fresh build.

    python -m pagekit.notebooks [--page SLUG] [--check]
    python -m pagekit.notebooks --time quick|page [--page SLUG]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from pagekit import inputs as section_inputs
from pagekit.paths import DIAGRAMS_DIR, FIGURES_DIR, NOTEBOOK_RUNS, REPO_ROOT, golden_dir
from pagekit.registry import package_for_page, page_config, page_packages, rel_path
from pagekit.registry import sections_in_page_order as registry_sections_in_page_order

SETTING_LINE = 'SETTING = "quick"'
SECTION_MAGIC = "%%section"
# What the install cell pins: the packages the pages' code imports, at the
# versions in requirements.lock (torch without its local "+cpu" label: the
# CPU-only index serves it under that name on Linux, PyPI elsewhere).
PINNED_PACKAGES = ("numpy", "matplotlib", "threadpoolctl", "torch")
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
EXECUTE_TIMEOUT = 3600  # seconds per cell: the page setting of the second page trains for minutes


def notebook_path(package: str) -> Path:
    page = page_config(package).PAGE
    return FIGURES_DIR / page / f"{page}.ipynb"


def timings_path(package: str) -> Path:
    return FIGURES_DIR / page_config(package).PAGE / "notebook-timings.json"


# ---------------------------------------------------------------------------
# What the notebook holds, in order.


def sections_in_page_order(package: str) -> list[tuple[int, str]]:
    """(page section number, script) for every section script, at the page
    section that first uses it."""
    return registry_sections_in_page_order(page_config(package))


def page_headings(package: str) -> dict[int, str]:
    """Numbered section headings of the page: {2: "Layer normalisation and RMS normalisation"}."""
    text = (REPO_ROOT / page_config(package).PAGE_FILE).read_text(encoding="utf-8")
    return {int(m.group(1)): m.group(2).strip() for m in re.finditer(r"^## (\d+)\. (.+)$", text, re.M)}


def page_code_blocks(package: str) -> dict[int, list[str]]:
    """The ```python blocks of each numbered section of the page (the page's
    own runnable code, such as the first page's "Using it in Python")."""
    text = (REPO_ROOT / page_config(package).PAGE_FILE).read_text(encoding="utf-8")
    parts = re.split(r"^## (\d+)\. .*$", text, flags=re.M)
    blocks = {}
    for number, body in zip(map(int, parts[1::2]), parts[2::2], strict=True):
        found = re.findall(r"^```python\n(.*?)^```[ \t]*$", body, flags=re.M | re.S)
        if found:
            blocks[number] = [b.rstrip("\n") for b in found]
    return blocks


def page_title(package: str) -> str:
    text = (REPO_ROOT / page_config(package).PAGE_FILE).read_text(encoding="utf-8")
    return re.search(r"^# (.+)$", text, re.M).group(1).strip()


def modules_needed(package: str, script: str) -> list[str]:
    """The page's modules a script imports, dependencies first, itself last."""
    package_dir = DIAGRAMS_DIR / package
    order: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in order or name in path:
            return
        tree = section_inputs.parse(package_dir / f"{name}.py")
        for dependency in sorted(section_inputs.local_imports(tree, package, package_dir)):
            visit(dependency, path + (name,))
        order.append(name)

    visit(script, ())
    return order


def reference_numbers(package: str) -> dict:
    """Per section: the page's committed texts and the golden record's pinned
    reduced texts (what the quick setting prints in the pinned environment)."""
    page = page_config(package).PAGE
    reference = {}
    for _, script in sections_in_page_order(package):
        numbers = json.loads((FIGURES_DIR / page / "numbers" / f"{script}.json").read_text(encoding="utf-8"))
        golden = json.loads((golden_dir(page) / f"{script}.json").read_text(encoding="utf-8"))
        reference[script] = {
            "heavy": bool(numbers.get("heavy")),
            "page": flat_texts(numbers["quotes"]),
            "quick": flat_texts(golden.get("reduced", golden)["quotes"]),
        }
    return reference


def flat_texts(quotes: dict) -> dict[str, str]:
    """{printed name: text}, a vector quote as name[0], name[1], ..."""
    flat = {}
    for name, quote in quotes.items():
        if isinstance(quote["text"], list):
            flat.update({f"{name}[{i}]": t for i, t in enumerate(quote["text"])})
        else:
            flat[name] = quote["text"]
    return flat


def notebook_inputs(package: str) -> list[Path]:
    """Every file the notebook is built from (the machinery is not one: the
    notebook installs it)."""
    files = {
        Path(__file__).resolve(),
        REPO_ROOT / page_config(package).PAGE_FILE,
        REPO_ROOT / "requirements.lock",
    }
    page = page_config(package).PAGE
    for _, script in sections_in_page_order(package):
        files.update(DIAGRAMS_DIR / package / f"{module}.py" for module in modules_needed(package, script))
        files.add(FIGURES_DIR / page / "numbers" / f"{script}.json")
        files.add(golden_dir(page) / f"{script}.json")
    if timings_path(package).exists():
        files.add(timings_path(package))
    return sorted(files)


def inputs_hash(package: str) -> str:
    """sha256 over the inputs' paths and contents; of the page's prose only
    what the notebook uses (its title, numbered headings and Python blocks), so editing a
    paragraph leaves the notebook current."""
    page_file = REPO_ROOT / page_config(package).PAGE_FILE
    digest = hashlib.sha256()
    for path in notebook_inputs(package):
        if path == page_file:
            content = json.dumps(
                [page_title(package), page_headings(package), page_code_blocks(package)], sort_keys=True
            ).encode()
        else:
            content = path.read_bytes()
        digest.update(rel_path(path).encode() + b"\0" + hashlib.sha256(content).digest())
    return digest.hexdigest()


# ---------------------------------------------------------------------------
# Cells.


def markdown_docstring(text: str) -> str:
    """A module docstring as Markdown: reST ``code`` becomes `code`."""
    return re.sub(r"``([^`]+)``", r"`\1`", text.strip())


def module_docstring(path: Path) -> str:
    return markdown_docstring(ast.get_docstring(section_inputs.parse(path)) or "")


def first_paragraph(text: str) -> str:
    return text.split("\n\n")[0].replace("\n", " ")


def without_docstring(source: str) -> str:
    """A module's source from its first statement after the docstring (the
    notebook shows the docstring as text above the cell)."""
    tree = ast.parse(source)
    if ast.get_docstring(tree) is None:
        return source
    lines = source.splitlines(keepends=True)
    return "".join(lines[tree.body[0].end_lineno :]).lstrip("\n")


def section_cell_source(package: str, script: str) -> str:
    """An experiment's cell: the magic line and the script's own code."""
    source = (DIAGRAMS_DIR / package / f"{script}.py").read_text(encoding="utf-8")
    return f"{SECTION_MAGIC} {package}.{script}\n" + without_docstring(source).rstrip("\n")


def pinned_versions() -> list[str]:
    """``name==version`` of each package the install cell pins, from requirements.lock."""
    lock = section_inputs.read_lock((REPO_ROOT / "requirements.lock").read_text(encoding="utf-8"))
    pins = []
    for name in PINNED_PACKAGES:
        version = lock[section_inputs.normalise_name(name)][0].split("+")[0]
        pins.append(f"{name}=={version}")
    return pins


def install_cell_source() -> str:
    """The notebook's first cell: installs what it needs unless it is there."""
    pins = ", ".join(f'"{p}"' for p in pinned_versions())
    return f'''# Installs what this notebook needs into this kernel's Python, unless it is already there:
# the page's code (the package `pagekit`, this page's experiments included) and the versions
# of numpy, matplotlib and torch that made the page's numbers (torch's CPU-only build on Linux).
import importlib.util
import os
import pathlib
import site
import subprocess
import sys
import sysconfig

PINS = [{pins}]
CPU_TORCH = os.environ.get("TORCH_INDEX_URL", "{CPU_TORCH_INDEX}")  # "" for your usual index


def page_code() -> list[str]:
    """The clone of the repository this notebook sits in, else the package file beside it."""
    here = pathlib.Path.cwd()
    for folder in (here, *here.parents):
        if (folder / "docs" / "diagrams" / "pagekit").is_dir():
            return ["-e", str(folder)]
    wheels = sorted(here.glob("pagekit-*.whl"))
    if not wheels:
        raise FileNotFoundError(
            "put the page's code, pagekit-<version>-py3-none-any.whl (linked beside this notebook on the page), "
            "in the notebook's folder (on Colab: the Files pane), then run this cell again"
        )
    return [str(wheels[-1])]


if importlib.util.find_spec("pagekit") is None:
    # --no-compile: each module is compiled when first imported, not every module of torch
    # and its dependencies now (about 45 s less to install, most of them never imported here)
    command = [sys.executable, "-m", "pip", "install", "--no-compile", *page_code()]
    if "google.colab" not in sys.modules:  # Colab's own numpy, matplotlib and torch serve there
        command += PINS
        if sys.platform.startswith("linux") and CPU_TORCH:
            command += ["--extra-index-url", CPU_TORCH]
    print(" ".join(command))
    subprocess.run(command, check=True)
    # This kernel sees the new install without a restart (an editable one's .pth file too).
    site.addsitedir(sysconfig.get_paths()["purelib"])
    importlib.invalidate_caches()'''


def setting_cell_source() -> str:
    return (
        '# "quick": the experiments that train run a few steps of small models (the configuration\n'
        "# the project's tests pin); \"page\": the page's own configuration, which prints its numbers.\n"
        f"{SETTING_LINE}"
    )


def reference_cell_source(package: str) -> str:
    """One folded cell of data: the page's numbers (and the tests' pinned
    quick run), one line per section."""
    reference = reference_numbers(package)
    lines = ",\n".join(
        f"{json.dumps(name)}: {json.dumps(reference[name], ensure_ascii=False, sort_keys=True)}" for name in reference
    )
    return (
        "# The numbers to compare with: the page's (the repository's committed numbers) and, for the\n"
        "# experiments with a quick configuration, the tests' pinned quick run.\n"
        "from pagekit import notebook_kit\n\n"
        f"notebook_kit.start(SETTING, r'''{{\n{lines}\n}}''')"
    )


def format_time(entry: dict | None, against: str = "the page's") -> str:
    if not entry:
        return "not measured yet"
    agreed = (
        f", and that run printed {entry['equal']} of {entry['compared']} numbers equal to {against}"
        if "compared" in entry
        else ""
    )
    return f"{entry['wall']:.1f} s wall, {entry['cpu']:.1f} CPU-s{agreed}"


def header_text(package: str, timings: dict, heavy: list[str]) -> str:
    config = page_config(package)
    sections = sections_in_page_order(package)
    measured = timings.get("settings", {})

    def total(setting: str) -> str:
        entries = [measured.get(setting, {}).get(s) for _, s in sections]
        if not all(entries):
            return "not measured yet"
        summed = {k: sum(e[k] for e in entries) for k in ("wall", "cpu", "equal", "compared")}
        return format_time(summed, "the expected values")

    def whole(setting: str) -> str:
        value = timings.get("whole_notebook_wall", {}).get(setting)
        return f"; the whole notebook {value:.0f} s wall, installing excluded" if value else ""

    where = (
        f"measured on {timings['machine']}, {timings.get('cores', '?')} cores, with nbclient"
        if timings.get("machine")
        else "not measured yet"
    )
    if heavy:
        settings = (
            f'- `"quick"`: the experiments that train ({", ".join(f"`{s}`" for s in heavy)}) run their '
            "reduced configuration, the one the project's tests pin: the same code with few steps and "
            f"small sizes. Together: {total('quick')}{whole('quick')}.\n"
            f'- `"page"`: the page\'s own configuration. Together: {total("page")}{whole("page")}.'
        )
    else:
        settings = (
            '- `"quick"` and `"page"` run the same sizes on this page: none of its experiments needs a '
            f"reduced configuration. Together: {total('page')}{whole('page')}."
        )
    return f"""# Run it yourself: {page_title(package)}

This notebook reruns every experiment of the page `{config.PAGE_FILE}`, in the page's order. Each
experiment is one cell holding the section's own script, as it is in the repository: its settings at
the top, then the code that computes, checks and draws. Run it, change a setting, run it again.

**Set-up.** Python 3.11 or later, on Linux or macOS with Apple silicon (or Google Colab). The first code cell installs the
page's code (the package `pagekit`) with numpy, matplotlib and torch at the versions that made the
page's numbers: from the repository when this notebook sits in a clone, else from the package file
`pagekit-<version>-py3-none-any.whl` that the page links beside the notebook (put it in the notebook's
folder). In a fresh environment:

```sh
python3 -m venv nb && nb/bin/pip install jupyterlab   # then: nb/bin/jupyter lab {config.PAGE}.ipynb
# or without a browser, keeping every output (numbers, tables, figures) in ran.ipynb:
nb/bin/pip install nbclient ipykernel
nb/bin/jupyter execute --allow-errors --output ran {config.PAGE}.ipynb
```

On Colab the first cell installs only the page's code and keeps Colab's own numpy, matplotlib and torch;
numpy is loaded before the page's code can pin its kernels there, so the last digits may differ.

**The setting** (the second code cell):

{settings}

Times {where}.

**What each experiment shows.** Every number it computed beside the page's, with `=` where they agree
(in the `"quick"` setting, an experiment with a reduced configuration is compared with the tests' pinned
quick run, and the page's full-run value is shown beside it); its time; which of the page's statements
hold for this run; and its figures. The run is kept in a variable named after the section: `.numbers`,
`.results` (the arrays it computed, to plot your own way) and `.figures`. Figures and numbers files go
to `{NOTEBOOK_RUNS}/` beside the notebook.

**Tinkering.** Change a setting in an experiment's cell and run the cell again. The page's statements
are about the page's configuration: for yours, each one that no longer holds is named with its value,
and nothing stops. A cell that is the page's own code, run in the `"page"` setting, stops with an
error after showing everything if one of the page's statements fails. Later cells that import a
changed experiment get your version; restart the kernel to go back to the page's code."""


def build_notebook(package: str):
    """The page's notebook as an nbformat node (cells with stable ids)."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    config = page_config(package)
    headings = page_headings(package)
    sections = sections_in_page_order(package)
    reference = reference_numbers(package)
    timings = json.loads(timings_path(package).read_text(encoding="utf-8")) if timings_path(package).exists() else {}
    measured = timings.get("settings", {})
    heavy = [s for _, s in sections if reference[s]["heavy"]]
    where = f"measured on {timings['machine']}" if timings.get("machine") else "not measured yet"

    cells = [new_markdown_cell(header_text(package, timings, heavy)), new_code_cell(install_cell_source())]
    cells.append(new_code_cell(setting_cell_source()))
    reference_cell = new_code_cell(reference_cell_source(package))
    reference_cell.metadata["jupyter"] = {"source_hidden": True}
    cells.append(reference_cell)

    code_blocks = page_code_blocks(package)
    headed: set[int] = set()  # sections whose heading is already in the notebook
    for number, script in sections_and_code_blocks(sections, code_blocks):
        if script is None:
            cells.append(
                new_markdown_cell(
                    f"## Section {number}. {headings.get(number, '')}\n\n"
                    "The page's own code block of this section, as the page shows it: it runs by itself "
                    "(it imports what it needs) and prints what the page's comments show."
                )
            )
            cells.extend(new_code_cell(block) for block in code_blocks[number])
            continue
        entry = {s: measured.get(s, {}).get(script) for s in ("quick", "page")}
        if reference[script]["heavy"]:
            how_long = (
                f"in the quick setting {format_time(entry['quick'], 'the pinned quick run')}; "
                f"in the page's configuration {format_time(entry['page'])}."
            )
        else:
            how_long = f"in either setting (the same sizes) {format_time(entry['page'] or entry['quick'])}."
        script_path = DIAGRAMS_DIR / package / f"{script}.py"
        helpers = [m for m in modules_needed(package, script) if m != script]
        uses = (
            "\n\nIt uses the page's "
            + ", ".join(
                f"`{package}.{m}` ({first_paragraph(module_docstring(DIAGRAMS_DIR / package / f'{m}.py'))})"
                for m in helpers
            )
            + f"; to read one, run `import {package}.{helpers[0]} as m; m??`."
            if helpers
            else ""
        )
        # A second experiment of one section goes under that section's heading.
        heading = (
            f"### Section {number}, continued"
            if number in headed
            else f"## Section {number}. {headings.get(number, script)}"
        )
        headed.add(number)
        cells.append(
            new_markdown_cell(
                f"{heading}\n\n"
                f"`{rel_path(script_path)}`. {module_docstring(script_path)}{uses}\n\n"
                f"**How long it takes** ({where}): {how_long}"
            )
        )
        cells.append(new_code_cell(section_cell_source(package, script)))

    for i, cell in enumerate(cells):
        cell.id = f"cell-{i:03d}"
    notebook = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "pages": {
                "page": config.PAGE,
                "built_by": "docs/diagrams/pagekit/notebooks.py",
                "inputs_hash": inputs_hash(package),
            },
        },
    )
    nbformat.validate(notebook)
    return notebook


def sections_and_code_blocks(sections: list[tuple[int, str]], code_blocks: dict[int, list[str]]):
    """(section number, script) in page order, with (number, None) where a
    section holds Python blocks of the page (after that section's script, if any)."""
    merged = [(number, 0, script) for number, script in sections]
    merged += [(number, 1, None) for number in code_blocks]
    return [(number, script) for number, _, script in sorted(merged, key=lambda m: (m[0], m[1]))]


def notebook_text(package: str) -> str:
    import nbformat

    return nbformat.writes(build_notebook(package))


def recorded_hash(package: str) -> str | None:
    try:
        return json.loads(notebook_path(package).read_text(encoding="utf-8"))["metadata"]["pages"]["inputs_hash"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_notebook(package: str, force: bool = False) -> bool:
    """Build and write the notebook when its inputs changed; True if written."""
    if not force and recorded_hash(package) == inputs_hash(package):
        return False
    path = notebook_path(package)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = notebook_text(package)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return True


# ---------------------------------------------------------------------------
# Running a notebook (the tests and --time), as the page tells a reader to.


def with_setting(notebook, setting: str):
    """The notebook with its setting cell's setting changed to ``setting``."""
    cell = next(c for c in notebook.cells if c.cell_type == "code" and SETTING_LINE in c.source)
    cell.source = cell.source.replace(SETTING_LINE, f"SETTING = {setting!r}".replace("'", '"'))
    return notebook


def execute(package: str, setting: str, workdir: Path, python: str | Path | None = None, notebook=None) -> Path:
    """Run the notebook (the committed one, or ``notebook``) top to bottom in
    ``workdir`` with ``jupyter execute`` from ``python``'s environment (by
    default this one), as the page's command does; returns the executed
    notebook's path. Raises CalledProcessError when a cell fails (its output
    is kept in the executed notebook up to that cell)."""
    import subprocess

    import nbformat

    notebook = notebook or nbformat.read(notebook_path(package), as_version=4)
    page = page_config(package).PAGE
    workdir.mkdir(parents=True, exist_ok=True)
    source = workdir / f"{page}.ipynb"
    nbformat.write(with_setting(notebook, setting), source)
    jupyter = Path(python or sys.executable).parent / "jupyter-execute"
    subprocess.run(
        [str(jupyter), f"--timeout={EXECUTE_TIMEOUT}", "--output", f"{page}-ran", source.name],
        cwd=workdir,
        check=True,
        stdin=subprocess.DEVNULL,
    )
    return workdir / f"{page}-ran.ipynb"


def runs_dir(setting: str, workdir: Path) -> Path:
    """Where a notebook executed in ``workdir`` leaves its sections' outputs:
    one folder per page, as ``out_dir`` of make figures (numbers/, figures)."""
    return workdir / NOTEBOOK_RUNS / setting


def measure(package: str, setting: str) -> dict:
    """Execute the notebook in ``setting`` and record each experiment's time."""
    load = os.getloadavg()[0]  # a shared machine's wall times depend on it
    with tempfile.TemporaryDirectory(prefix="notebook-", dir=REPO_ROOT / "build") as tmp:
        started = time.perf_counter()
        execute(package, setting, Path(tmp))
        elapsed = time.perf_counter() - started
        page = page_config(package).PAGE
        measured = json.loads(
            (runs_dir(setting, Path(tmp)) / page / "notebook_timings.json").read_text(encoding="utf-8")
        )
    from pagekit import numeric_env

    path = timings_path(package)
    timings = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    timings["machine"] = numeric_env.cpu_model()
    timings["cores"] = os.cpu_count()
    timings.setdefault("settings", {})[setting] = measured
    timings.setdefault("load_average", {})[setting] = round(load, 1)
    timings.setdefault("whole_notebook_wall", {})[setting] = round(elapsed, 1)
    path.write_text(json.dumps(timings, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return measured


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", help="one page (slug or package); default: every page")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if a committed notebook differs from a fresh build"
    )
    parser.add_argument(
        "--time",
        choices=("quick", "page"),
        help="execute the notebook in this setting and record each experiment's time",
    )
    args = parser.parse_args()
    packages = [package_for_page(args.page)] if args.page else page_packages()
    status = 0
    for package in packages:
        path = notebook_path(package)
        if args.time:
            measured = measure(package, args.time)
            print(
                f"{rel_path(timings_path(package))}: {args.time}: "
                + ", ".join(f"{s} {e['wall']:.1f} s" for s, e in measured.items())
            )
            write_notebook(package, force=True)
        elif args.check:
            current = path.exists() and path.read_text(encoding="utf-8") == notebook_text(package)
            if not current:
                print(f"{rel_path(path)} is stale: run `make notebooks`", file=sys.stderr)
                status = 1
        elif write_notebook(package):
            print(f"wrote {rel_path(path)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
