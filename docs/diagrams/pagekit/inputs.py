"""What a section's numbers depend on, and its content hash.

A section is stale when the hash of its inputs differs from the hash its
numbers file records; file times do not matter (a fresh clone reruns
nothing). The inputs: the section script; the modules of its page package it
imports, transitively (models, training loops); data files it declares in a
module-level ``INPUTS = ("corpus/plays.txt.xz", ...)`` (paths relative to the
package); the page package's ``__init__`` apart from its registry
(REGISTRY_NAMES); the modules of pagekit that decide numbers or SVG bytes
(RESULT_MODULES); the locked versions (requirements.lock) of the packages
that compute or draw (numpy, scipy, matplotlib, torch, threadpoolctl) and of
everything they depend on, transitively; and the numeric environment (see
numeric_env). A package only the site, the tests or the tools use is outside
that closure, so locking or bumping it leaves every section current.

Python files count by meaning, not bytes: each is hashed as its syntax tree
without docstrings (``code_content``), so a comment, a docstring, a
re-wrapped line or a formatter's pass reruns nothing, while a changed
constant or statement reruns every section that imports the module.

Light on purpose (ast, hashlib and json only): the page check and `make figures`
with nothing to do must stay instant.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import re
import sys
from pathlib import Path

from pagekit import numeric_env

from pagekit.atomic import write_json_atomically
from pagekit.paths import BUILD_DIR, DIAGRAMS_DIR, PACKAGE_DIR, REPO_ROOT

LOCK = REPO_ROOT / "requirements.lock"
# The modules of pagekit that decide a section's numbers or SVG bytes: the
# numeric environment and the routes of torch's products and square roots, torch's thread count
# (torch_loader), the record and how numbers are written (record, numformat, cli),
# the house style, the names a script imports (section), and what the
# record says a figure's words label (figure_labels). The rest (the
# runner, the checks, paths, atomic writes) cannot change an output's bytes.
RESULT_MODULES = (
    "numeric_env.py",
    "openblas_matmul.py",
    "exact_sqrt.py",
    "torch_loader.py",
    "record.py",
    "numformat.py",
    "cli.py",
    "style.py",
    "section.py",
    "figure_labels.py",
)
# The packages whose versions change numbers or SVG bytes (with their
# dependencies, found in the lock).
RESULT_PACKAGES = ("numpy", "scipy", "matplotlib", "torch", "threadpoolctl")
_LOCK_ENTRY = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")


class InputError(ValueError):
    """A declared input that does not exist, or a script that does not parse."""


def parse(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError as error:
        raise InputError(f"{path.relative_to(REPO_ROOT)}:{error.lineno}: syntax error: {error.msg}") from None


def local_imports(tree: ast.Module, package: str, package_dir: Path | None) -> set[str]:
    """Modules of the same page package this module imports (those with a
    file in ``package_dir``; every name imported, for None)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # from .x import y / from . import x
                if module:
                    names.add(module.split(".")[0])
                else:
                    names.update(alias.name for alias in node.names)
            elif module.startswith(package + "."):
                names.add(module.split(".")[1])
            elif module == package:
                names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(package + "."):
                    names.add(alias.name.split(".")[1])
    return names if package_dir is None else {n for n in names if (package_dir / f"{n}.py").exists()}


def declared_inputs(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "INPUTS" for t in node.targets):
            try:
                return list(ast.literal_eval(node.value))
            except ValueError:
                raise InputError("INPUTS must be a literal tuple of paths") from None
    return []


def section_inputs(package: str, name: str) -> list[Path]:
    """Every file whose content decides this section's numbers, sorted."""
    package_dir = DIAGRAMS_DIR / package
    seen: set[str] = set()
    files: set[Path] = set()
    todo = [name]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        path = package_dir / f"{module}.py"
        if not path.exists():
            raise InputError(f"{path.relative_to(REPO_ROOT)} does not exist")
        files.add(path)
        declared_files, imported = module_facts(path, package)
        for declared in declared_files:
            data = (package_dir / declared).resolve()
            if not data.is_file():
                raise InputError(f"{path.relative_to(REPO_ROOT)}: declared input {declared} does not exist")
            files.add(data)
        todo.extend({n for n in imported if (package_dir / f"{n}.py").exists()} - seen)
    files.add(package_dir / "__init__.py")
    files.update(PACKAGE_DIR / m for m in RESULT_MODULES)
    return sorted(files)


# The page registry's names in a page package's __init__: which script serves
# which section and how the checker, the runner and the report treat it.
# They decide no number, so editing them leaves every section current.
REGISTRY_NAMES = frozenset(
    {
        "PAGE",
        "PAGE_FILE",
        "SECTION_SCRIPTS",
        "SUMMARY_SCRIPTS",
        "RESTATED_SCRIPTS",
        "RESULT_SCRIPTS",
        "EXTRA_SCRIPTS",
        "SHARED_QUOTES",
        "STRUCTURAL",
        "TIMED_SECTIONS",
        "TORCH_ONLY_SECTIONS",
        "THREAD_EXACT_SECTIONS",
        "DERIVED_SECTIONS",
    }
)


def _without_docstrings(body: list[ast.stmt]) -> list[ast.stmt]:
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    return body or [ast.Pass()]


def code_content(path: Path, *, leave_out: frozenset[str] = frozenset()) -> bytes:
    """What of a Python file can decide a number: its syntax tree without
    comments, docstrings (module, class, function) or layout, and without the
    module-level assignments to the names in ``leave_out``."""
    return tree_content(parse(path), leave_out=leave_out)


# sha256 of code_content by the file's own sha256: a page check hashes the
# shared modules for every section, and parsing and dumping them was most of
# its time. Keyed by content, not by time stamp, so an edit is never missed;
# kept in build/ between runs, under a key that also holds this module's own
# bytes and the Python version (the syntax tree's dump is theirs).
DIGEST_CACHE = BUILD_DIR / "code-digests.json"  # also each module's INPUTS and imports (module_facts)
_CACHE_KEY = hashlib.sha256(Path(__file__).read_bytes() + sys.version.encode()).hexdigest()[:16]
_CACHE: dict[str, str] = {}


def _cache() -> dict[str, str]:
    if not _CACHE:
        try:
            stored = json.loads(DIGEST_CACHE.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            stored = {}
        if isinstance(stored, dict) and stored.get("key") == _CACHE_KEY:
            _CACHE.update(stored.get("entries", {}))
    return _CACHE


def _file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def module_facts(path: Path, package: str) -> tuple[list[str], list[str]]:
    """A module's declared INPUTS and the modules of its page package it
    imports (present or not), read once per file content."""
    key = f"facts:{_file_sha(path)}:{package}"
    cache = _cache()
    if key not in cache:
        tree = parse(path)
        names = sorted(local_imports(tree, package, None))
        cache[key] = json.dumps([declared_inputs(tree), names])
        _store(cache)
    declared, imported = json.loads(cache[key])
    return declared, imported


CACHE_ENTRIES = 4000  # past this the oldest go: a cache of every version ever edited would only grow


def _store(cache: dict[str, str]) -> None:
    for old in list(cache)[: max(0, len(cache) - CACHE_ENTRIES)]:
        del cache[old]
    try:
        write_json_atomically(DIGEST_CACHE, {"key": _CACHE_KEY, "entries": cache})
    except OSError:
        pass  # a read-only tree: computed again next time


def content_digest(path: Path, *, leave_out: frozenset[str] = frozenset()) -> bytes:
    """sha256 of ``code_content(path, leave_out=...)``, computed once per file content."""
    key = f"{_file_sha(path)}:{','.join(sorted(leave_out))}"
    digests = _cache()
    if key not in digests:
        digests[key] = hashlib.sha256(code_content(path, leave_out=leave_out)).hexdigest()
        _store(digests)
    return bytes.fromhex(digests[key])


def tree_content(tree: ast.Module, *, leave_out: frozenset[str] = frozenset()) -> bytes:
    """code_content of a parsed module (a notebook cell's too)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            node.body = _without_docstrings(node.body)
    tree.body = [
        node
        for node in _without_docstrings(tree.body)
        if not (
            isinstance(node, (ast.Assign, ast.AnnAssign))
            and leave_out
            and {getattr(t, "id", None) for t in getattr(node, "targets", [getattr(node, "target", None)])} <= leave_out
        )
    ]
    return ast.dump(tree).encode()


def normalise_name(name: str) -> str:
    """A distribution's name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(text: str) -> dict[str, tuple[str, set[str]]]:
    """{package: (version, the packages that require it)} from pip-compile's
    output: each ``name==version`` entry, then its hashes, then its
    ``# via`` lines (``-r requirements.txt`` for a direct requirement)."""
    entries: dict[str, tuple[str, set[str]]] = {}
    current = None
    in_via = False
    for line in text.splitlines():
        stripped = line.strip()
        if match := _LOCK_ENTRY.match(line):
            current = normalise_name(match.group(1))
            entries[current] = (match.group(2).rstrip(" \\"), set())
            in_via = False
        elif current and stripped.startswith("# via"):
            rest = stripped[len("# via") :].strip()
            in_via = not rest
            if rest:
                entries[current][1].add(rest)
        elif current and in_via and stripped.startswith("#   "):
            entries[current][1].add(stripped[1:].strip())
        elif not stripped.startswith("--hash"):
            in_via = False
    return {
        name: (version, {normalise_name(v.split(" (")[0]) if not v.startswith("-") else v for v in via})
        for name, (version, via) in entries.items()
    }


def result_closure(lock: dict[str, tuple[str, set[str]]]) -> dict[str, str]:
    """{package: version} of RESULT_PACKAGES and everything they depend on."""
    closure = {normalise_name(p) for p in RESULT_PACKAGES} & set(lock)
    while True:
        more = {name for name, (_, via) in lock.items() if via & closure} - closure
        if not more:
            return {name: lock[name][0] for name in sorted(closure)}
        closure |= more


def result_pins() -> str:
    """The locked ``name==version`` of the packages that compute or draw and
    of their dependencies: what of the lock can change a number or a byte."""
    try:
        return _result_pins(LOCK.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ""


@functools.lru_cache(maxsize=2)
def _result_pins(lock_text: str) -> str:
    """result_pins for one text of the lock: the page check hashes every section's inputs."""
    lock = read_lock(lock_text)
    return "\n".join(f"{name}=={version}" for name, version in result_closure(lock).items())


def inputs_hash(package: str, name: str, variant: str | None = None) -> str:
    """sha256 over the inputs' paths and bytes, the locked versions of the
    result packages' closure and the numeric environment."""
    digest = hashlib.sha256()
    for path in section_inputs(package, name):
        digest.update(str(path.relative_to(REPO_ROOT)).encode() + b"\0")
        if path.suffix != ".py":
            digest.update(hashlib.sha256(path.read_bytes()).digest())  # declared data
        else:
            leave_out = REGISTRY_NAMES if path.name == "__init__.py" else frozenset()
            digest.update(content_digest(path, leave_out=leave_out))
    digest.update(result_pins().encode() + b"\0")
    digest.update(numeric_env.fingerprint(variant).encode())
    return digest.hexdigest()
