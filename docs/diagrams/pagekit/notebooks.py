"""Each page's notebook, built from its section scripts (`make notebooks`).

The notebook reruns the page's experiments in the page's order with the
page's own code, all of it in the notebook: every module an experiment runs
(the shared machinery, the page's helper modules, the section scripts) is a
``%%writefile`` cell holding that file's source as it is in the repository,
so the notebook writes a small copy of the repository beside itself and
imports from it; nothing comes from an import the reader cannot see. Data
the experiments read (the corpus, the robustness report's data) is written
by collapsed cells, binary files as base64. The first code cell holds the
one setting, "quick" (the tests' reduced configuration of every heavy
section) or "page" (the page's own configuration), and stops if numpy or
torch is already loaded; the cell after numeric_env's pins the numeric
environment (numeric_env.apply) before anything imports either.

Each experiment's cell runs ``notebook_kit.experiment``: its numbers beside
the page's committed ones (and, in the quick setting, beside the golden
record's pinned reduced run), its time, its figures. The notebook says how
long each experiment took when it was last measured
(``figures/<page>/notebook-timings.json``, written by ``--time``).

Built with nbformat, never edited by hand: the notebook is a function of
its inputs (the files above, the committed numbers, the golden record, the
timings and this script), whose hash it records, so `make notebooks` with
nothing changed rewrites nothing and a test fails when the committed
notebook differs from a fresh build.

    python docs/diagrams/notebooks.py [--page SLUG] [--check]
    python docs/diagrams/notebooks.py --time quick|page [--page SLUG]
    python docs/diagrams/notebooks.py --execute quick|page OUTPUT --page SLUG
"""

from __future__ import annotations

import argparse
import ast
import base64
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from pagekit import inputs as section_inputs
from pagekit.paths import DIAGRAMS_DIR, FIGURES_DIR, PACKAGE_DIR, REPO_ROOT, golden_dir
from pagekit.registry import package_for_page, page_config, page_packages, rel_path
from pagekit.registry import sections_in_page_order as registry_sections_in_page_order

# The machinery every experiment runs through, in the order the notebook
# writes it; notebook_kit is the notebook's own runner.
MACHINERY = (
    "__init__.py",
    "paths.py",
    "numeric_env.py",
    "openblas_matmul.py",
    "exact_sqrt.py",
    "registry.py",
    "inputs.py",
    "figure_bounds.py",
    "executor.py",
    "atomic.py",
    "numformat.py",
    "style.py",
    "torch_loader.py",
    "record.py",
    "cli.py",
    "section.py",
    "notebook_kit.py",
)
SETTING_LINE = 'SETTING = "quick"'
EXECUTE_TIMEOUT = 3600  # seconds per cell: the page setting of the second page trains for minutes


def notebook_path(package: str) -> Path:
    page = page_config(package).PAGE
    return FIGURES_DIR / page / f"{page}.ipynb"


def timings_path(package: str) -> Path:
    return FIGURES_DIR / page_config(package).PAGE / "notebook-timings.json"


def code_dir_name(package: str) -> str:
    """The folder the notebook writes its copy of the code into, beside itself."""
    return f"{page_config(package).PAGE}-code"


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


def declared_data(package: str, module: str) -> list[Path]:
    """The data files a module declares in INPUTS (see section_inputs)."""
    path = DIAGRAMS_DIR / package / f"{module}.py"
    return [(path.parent / p).resolve() for p in section_inputs.declared_inputs(section_inputs.parse(path))]


def reference_numbers(package: str) -> dict:
    """Per section: the page's committed texts and the golden record's pinned
    reduced texts (what the quick setting prints in the pinned environment)."""
    page = page_config(package).PAGE
    reference = {}
    for _, script in sections_in_page_order(package):
        numbers = json.loads((FIGURES_DIR / page / "numbers" / f"{script}.json").read_text(encoding="utf-8"))
        golden = json.loads((golden_dir(page) / f"{script}.json").read_text(encoding="utf-8"))
        reference[script] = {
            "page_slug": page,
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
    """Every file the notebook is built from."""
    files = {
        Path(__file__).resolve(),
        REPO_ROOT / page_config(package).PAGE_FILE,
        DIAGRAMS_DIR / package / "__init__.py",
    }
    files.update(PACKAGE_DIR / m for m in MACHINERY)
    page = page_config(package).PAGE
    for _, script in sections_in_page_order(package):
        for module in modules_needed(package, script):
            files.add(DIAGRAMS_DIR / package / f"{module}.py")
            files.update(declared_data(package, module))
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


def format_time(entry: dict | None, against: str = "the page's") -> str:
    if not entry:
        return "not measured yet"
    agreed = (
        f", and that run printed {entry['equal']} of {entry['compared']} numbers equal to {against}"
        if "compared" in entry
        else ""
    )
    return f"{entry['wall']:.1f} s wall, {entry['cpu']:.1f} CPU-s{agreed}"


def writefile_cell(code_dir: str, path: Path, *, hidden: bool = False):
    from nbformat.v4 import new_code_cell

    target = f"{code_dir}/{rel_path(path)}"
    cell = new_code_cell(f"%%writefile {target}\n" + path.read_text(encoding="utf-8"))
    if hidden:
        cell.metadata["jupyter"] = {"source_hidden": True}
    return cell


def binary_data_cell(path: Path):
    from nbformat.v4 import new_code_cell

    data = path.read_bytes()
    encoded = base64.b64encode(data).decode()
    lines = [encoded[i : i + 100] for i in range(0, len(encoded), 100)]
    source = (
        f"# {rel_path(path)}: {len(data):,} bytes, base64 (sha256 {hashlib.sha256(data).hexdigest()})\n"
        "import base64\n"
        f"(CODE / {rel_path(path)!r}).write_bytes(base64.b64decode(\n"
        + "\n".join(f"    {line!r}" for line in lines)
        + "\n))"
    )
    cell = new_code_cell(source)
    cell.metadata["jupyter"] = {"source_hidden": True}
    return cell


def data_cells(code_dir: str, path: Path) -> list:
    from nbformat.v4 import new_markdown_cell

    kind = "binary, written from base64" if is_binary(path) else "text"
    note = new_markdown_cell(
        f"Data the next experiment reads: `{rel_path(path)}` "
        f"({path.stat().st_size:,} bytes, {kind}; the cell below is folded)."
    )
    return [note, binary_data_cell(path) if is_binary(path) else writefile_cell(code_dir, path, hidden=True)]


def is_binary(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


def build_notebook(package: str):
    """The page's notebook as an nbformat node (cells with stable ids)."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    config = page_config(package)
    code_dir = code_dir_name(package)
    headings = page_headings(package)
    sections = sections_in_page_order(package)
    reference = reference_numbers(package)
    timings = json.loads(timings_path(package).read_text(encoding="utf-8")) if timings_path(package).exists() else {}
    measured = timings.get("settings", {})
    heavy = [s for _, s in sections if reference[s]["heavy"]]
    cells = []

    def total(setting: str) -> str:
        entries = [measured.get(setting, {}).get(s) for _, s in sections]
        if not all(entries):
            return "not measured yet"
        summed = {
            key: sum(e[key] for e in entries)
            for key in ("wall", "cpu", "equal", "compared")
            if all(key in e for e in entries)
        }
        return format_time(summed, "the expected values")

    where = (
        f"measured on {timings['machine']}, {timings.get('cores', '?')} cores, executing this notebook with nbclient"
        if timings.get("machine")
        else "not measured yet"
    )

    def load(setting: str) -> str:
        whole = timings.get("whole_notebook_wall", {}).get(setting)
        value = timings.get("load_average", {}).get(setting)
        parts = ([f"the whole notebook {whole:.0f} s wall, kernel start and imports included"] if whole else []) + (
            [f"load average {value} then: wall times stretch on a busy machine"] if value else []
        )
        return f" ({'; '.join(parts)})" if parts else ""

    if heavy:
        settings_text = (
            f'- `"quick"`: the experiments that train ({", ".join(f"`{s}`" for s in heavy)}) run their '
            "reduced configuration, the one the project's tests pin: the same code with few steps and "
            f"small sizes. The experiments together: {total('quick')}{load('quick')}.\n"
            f'- `"page"`: the page\'s own configuration. The experiments together: '
            f"{total('page')}{load('page')}.\n\n"
            f"Times {where}."
        )
    else:
        settings_text = (
            '- `"quick"` and `"page"` run the same sizes on this page: none of its experiments '
            f"needs a reduced configuration. The experiments together: {total('page')}{load('page')}.\n\n"
            f"Times {where}."
        )
    cells.append(
        new_markdown_cell(f"""# Run it yourself: {page_title(package)}

This notebook reruns every experiment of the page `{config.PAGE_FILE}`, in the page's order, with the
code that made the page's numbers and figures: every module is in a cell below, written to the folder
`{code_dir}/` beside the notebook and imported from there. It is built from the repository's scripts by
`docs/diagrams/notebooks.py` (never edited by hand), so it is current with the page.

**Set-up.** Python 3.11 or later and the pinned packages of the repository's `requirements.txt`:

```sh
python3 -m venv .venv
.venv/bin/pip install -r requirements.txt
.venv/bin/jupyter-execute {config.PAGE}.ipynb   # runs it without a front end (--inplace keeps the outputs)
```

or open it in JupyterLab or VS Code with the `.venv` kernel.

**The setting** (the first code cell):

{settings_text}

**Which numbers to compare.** Each experiment prints a table: every number it computed, beside the
page's. In the `"page"` setting, on an x86-64 processor with AVX2 and FMA (the pinned numeric
environment below), "this run" equals "the page" in every row marked `=`; timings are marked
"measured here" and differ by machine. In the `"quick"` setting an experiment with a reduced
configuration is compared with the tests' pinned quick run instead, and the page's full-run value is
shown beside it.

After editing an experiment's cells, rerun them and its run cell: it imports the page's modules afresh.
After editing a machinery cell, restart the kernel and run all.""")
    )
    cells.append(
        new_code_cell(
            '# "quick": the experiments that train run reduced sizes (seconds each);\n'
            "# \"page\": the page's own configuration, which prints the page's numbers.\n"
            f"{SETTING_LINE}\n\n"
            "import sys  # noqa: E402  (the setting comes first, where a reader changes it)\n"
            "from pathlib import Path  # noqa: E402\n\n"
            f"CODE = Path({code_dir!r})  # the notebook's copy of the repository's code\n"
            "for folder in (" + ", ".join(repr(f) for f in sorted(notebook_folders(package))) + "):\n"
            "    (CODE / folder).mkdir(parents=True, exist_ok=True)\n"
            'sys.path.insert(0, str(CODE / "docs" / "diagrams"))\n'
            'if "numpy" in sys.modules or "torch" in sys.modules:\n'
            '    raise RuntimeError("numpy or torch is already loaded, so the numeric environment cannot be '
            'pinned: restart the kernel and run from the top")'
        )
    )

    cells.append(
        new_markdown_cell(
            "## The shared machinery\n\n"
            "Every experiment runs through these modules, as `make figures` runs them: `numeric_env` pins the "
            "numeric environment (which kernels numpy and torch use, one thread) before numpy or torch loads; "
            "`record` registers the numbers and claims, `style` draws and saves the figures; `notebook_kit` runs one "
            "experiment in this notebook and compares its numbers with the page's. Skip to the first "
            "experiment to see what a page section computes."
        )
    )
    for name in MACHINERY:
        path = PACKAGE_DIR / name
        cells.append(new_markdown_cell(f"`{rel_path(path)}`: " + first_paragraph(module_docstring(path))))
        cells.append(writefile_cell(code_dir, path))
        if name == "numeric_env.py":
            cells.append(
                new_code_cell(
                    "from pagekit import numeric_env\n\n"
                    "# Before numpy or torch loads (once per process: the modules that load them ask for it again).\n"
                    "NUMERIC_VARIANT = numeric_env.applied_variant()\n"
                    'print("numeric environment:", NUMERIC_VARIANT, "(pinned)" if numeric_env.can_honour_pin() '
                    'else "(this machine cannot run the pinned kernels: last digits may differ)")'
                )
            )
    init = DIAGRAMS_DIR / package / "__init__.py"
    cells.append(new_markdown_cell(f"`{rel_path(init)}`: which script serves which page section."))
    cells.append(writefile_cell(code_dir, init))
    cells.append(
        new_markdown_cell(
            "The page's numbers, to compare with (from the repository's committed numbers files and its "
            "golden record of the quick runs; folded):"
        )
    )
    reference_cell = new_code_cell(
        f"%%writefile {code_dir}/notebook_reference.json\n"
        + json.dumps(reference, indent=1, ensure_ascii=False, sort_keys=True)
        + "\n"
    )
    reference_cell.metadata["jupyter"] = {"source_hidden": True}
    cells.append(reference_cell)
    cells.append(new_code_cell("from pagekit.notebook_kit import experiment"))

    written: set[str] = set()
    code_blocks = page_code_blocks(package)
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
        heading = headings.get(number, script)
        entry = {s: measured.get(s, {}).get(script) for s in ("quick", "page")}
        if reference[script]["heavy"]:
            how_long = (
                f"in the quick setting {format_time(entry['quick'], 'the pinned quick run')}; "
                f"in the page's configuration {format_time(entry['page'])}."
            )
        else:
            how_long = f"in either setting (the same sizes) {format_time(entry['page'] or entry['quick'])}."
        script_path = DIAGRAMS_DIR / package / f"{script}.py"
        cells.append(
            new_markdown_cell(
                f"## Section {number}. {heading}\n\n"
                f"`{rel_path(script_path)}`. {module_docstring(script_path)}\n\n"
                f"**How long it takes** ({where}): {how_long}"
            )
        )
        for module in modules_needed(package, script):
            if module in written:
                continue
            written.add(module)
            path = DIAGRAMS_DIR / package / f"{module}.py"
            for data in declared_data(package, module):
                if rel_path(data) not in written:
                    written.add(rel_path(data))
                    cells.extend(data_cells(code_dir, data))
            if module != script:
                cells.append(
                    new_markdown_cell(
                        f"`{rel_path(path)}`, the page's code this experiment uses: "
                        + first_paragraph(module_docstring(path))
                    )
                )
            else:
                cells.append(new_markdown_cell(f"The section script, `{rel_path(path)}`:"))
            cells.append(writefile_cell(code_dir, path))
        cells.append(
            new_markdown_cell(
                "Run it: its numbers beside the page's, its time, and the page's figures drawn from this run."
            )
        )
        cells.append(new_code_cell(f"{script} = experiment({package!r}, {script!r}, SETTING)"))

    for i, cell in enumerate(cells):
        cell.id = f"cell-{i:03d}"
    notebook = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "pages": {
                "page": config.PAGE,
                "built_by": "docs/diagrams/notebooks.py",
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


def first_paragraph(text: str) -> str:
    return text.split("\n\n")[0].replace("\n", " ")


def notebook_folders(package: str) -> set[str]:
    """Every folder the notebook's %%writefile cells write into."""
    folders = {"docs/diagrams", "docs/diagrams/pagekit", f"docs/diagrams/{package}"}
    for _, script in sections_in_page_order(package):
        for module in modules_needed(package, script):
            folders.update(str(Path(rel_path(d)).parent) for d in declared_data(package, module))
    return folders


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
# Running a notebook (the tests and --time).


def with_setting(notebook, setting: str):
    """The notebook with its first code cell's setting changed to ``setting``."""
    first = next(c for c in notebook.cells if c.cell_type == "code")
    if first.source.count(SETTING_LINE) != 1:
        raise ValueError(f"the first code cell must hold {SETTING_LINE!r} once")
    first.source = first.source.replace(SETTING_LINE, f"SETTING = {setting!r}".replace("'", '"'))
    return notebook


def execute(package: str, setting: str, workdir: Path):
    """Run the committed notebook top to bottom in ``workdir`` with nbclient;
    returns the executed notebook."""
    import nbformat
    from nbclient import NotebookClient

    notebook = with_setting(nbformat.read(notebook_path(package), as_version=4), setting)
    client = NotebookClient(
        notebook, kernel_name="python3", timeout=EXECUTE_TIMEOUT, resources={"metadata": {"path": str(workdir)}}
    )
    client.execute()
    return notebook


def runs_dir(package: str, setting: str, workdir: Path) -> Path:
    """Where a notebook executed in ``workdir`` leaves its sections' outputs:
    one folder per page, as ``out_dir`` of make figures (numbers/, figures)."""
    return workdir / code_dir_name(package) / "runs" / setting


def measure(package: str, setting: str) -> dict:
    """Execute the notebook in ``setting`` and record each experiment's time."""
    load = os.getloadavg()[0]  # a shared machine's wall times depend on it
    with tempfile.TemporaryDirectory(prefix="notebook-") as tmp:
        started = time.perf_counter()
        execute(package, setting, Path(tmp))
        elapsed = time.perf_counter() - started
        page = page_config(package).PAGE
        measured = json.loads(
            (runs_dir(package, setting, Path(tmp)) / page / "notebook_timings.json").read_text(encoding="utf-8")
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
    parser.add_argument(
        "--execute",
        nargs=2,
        metavar=("SETTING", "OUTPUT"),
        help="execute one page's notebook in SETTING in a temporary directory and "
        "write the executed notebook to OUTPUT (the tests)",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        help="with --execute: run in this (empty or new) directory instead, and keep "
        "what the notebook writes there (its code, and its sections' numbers and "
        "figures under <code>/runs/<setting>/)",
    )
    args = parser.parse_args()
    packages = [package_for_page(args.page)] if args.page else page_packages()
    if args.execute:
        import signal

        import nbformat

        # SIGTERM (its parent's death, a test run stopped) ends the run the way
        # Ctrl-C does: nbclient shuts its kernel down on the way out.
        signal.signal(signal.SIGTERM, signal.default_int_handler)

        if len(packages) != 1:
            parser.error("--execute needs --page")
        setting, output = args.execute
        if args.workdir is not None:
            args.workdir.mkdir(parents=True, exist_ok=True)
            nbformat.write(execute(packages[0], setting, args.workdir), output)
            return 0
        with tempfile.TemporaryDirectory(prefix="notebook-") as tmp:
            nbformat.write(execute(packages[0], setting, Path(tmp)), output)
        return 0
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
