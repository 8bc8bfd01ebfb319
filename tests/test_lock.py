"""The lock: requirements.lock pins every package of the virtual environment
(transitive ones included, with hashes), matches the direct requirements in
requirements.txt, and the section inputs hash covers exactly the locked
packages that can change a number or a figure."""

from __future__ import annotations

import re
from importlib import metadata

import pytest

from pagekit import inputs as section_inputs
from conftest import REPO_ROOT

REQUIREMENTS = REPO_ROOT / "requirements.txt"
RELOCK = "run `make lock`, then `make venv`"


def lock_entries() -> dict[str, tuple[str, set[str]]]:
    return section_inputs.read_lock(section_inputs.LOCK.read_text(encoding="utf-8"))


def direct_requirements() -> dict[str, str]:
    pins = {}
    for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep and version, f"requirements.txt: {line!r} is not an exact pin (name==version)"
            pins[section_inputs.normalise_name(name)] = version.strip()
    return pins


def test_installed_set_equals_the_lock():
    """What the running environment holds is the lock, no more, no less."""
    installed = {section_inputs.normalise_name(d.metadata["Name"]): d.version for d in metadata.distributions()}
    # This project itself, installed in place by `make venv` (pip install -e .), is not a locked dependency.
    assert installed.pop("pagekit", None) is not None, "this project is not installed in .venv: run `make venv`"
    locked = {name: version for name, (version, _) in lock_entries().items()}
    extra = sorted(f"{n}=={v}" for n, v in installed.items() if locked.get(n) != v)
    missing = sorted(f"{n}=={v}" for n, v in locked.items() if installed.get(n) != v)
    assert not extra and not missing, (
        f"the environment differs from requirements.lock: installed, not locked "
        f"{extra}; locked, not installed {missing}: run `make venv`"
    )


def test_lock_matches_the_direct_requirements():
    """Each direct requirement is locked at its pin (torch's local +cpu label
    aside), and the lock's direct entries are exactly requirements.txt's."""
    lock, direct = lock_entries(), direct_requirements()
    wrong = [
        f"{name}=={version} (lock: {lock[name][0] if name in lock else 'absent'})"
        for name, version in direct.items()
        if name not in lock or lock[name][0].split("+")[0] != version
    ]
    assert not wrong, f"requirements.lock is not the lock of requirements.txt: {wrong}; {RELOCK}"
    marked = {name for name, (_, via) in lock.items() if "-r requirements.txt" in via}
    assert marked == set(direct), f"the lock's direct requirements differ from requirements.txt; {RELOCK}"


def test_every_lock_entry_has_a_hash():
    text = section_inputs.LOCK.read_text(encoding="utf-8")
    blocks = re.split(r"\n(?=[a-z0-9])", text)
    unhashed = [block.split()[0] for block in blocks if "==" in block.split("\n")[0] and "--hash=sha256:" not in block]
    assert not unhashed, f"lock entries without a hash: {unhashed}; {RELOCK}"
    assert len(lock_entries()) == len([b for b in blocks if "==" in b.split("\n")[0]])


SAMPLE_LOCK = """\
matplotlib==3.11.2 \\
    --hash=sha256:aa
    # via -r requirements.txt
pillow==13.0.0 \\
    --hash=sha256:bb
    # via
    #   matplotlib
    #   cairosvg
cairosvg==2.9.1 \\
    --hash=sha256:cc
    # via -r requirements.txt
sphinx==9.0.4 \\
    --hash=sha256:dd
    # via
    #   -r requirements.txt
    #   furo
"""


def test_result_closure_follows_the_dependencies():
    """The hashed part of the lock: the numeric packages and what they pull
    in (pillow under matplotlib), never a site-only package."""
    closure = section_inputs.result_closure(section_inputs.read_lock(SAMPLE_LOCK))
    assert closure == {"matplotlib": "3.11.2", "pillow": "13.0.0"}


@pytest.mark.parametrize(
    ("bump", "stale"),
    [
        ("sphinx==9.0.4", False),  # a docs-only package
        ("cairosvg==2.9.1", False),  # make preview's, though it needs pillow too
        ("pillow==13.0.0", True),  # matplotlib draws through it
    ],
)
def test_inputs_hash_follows_only_the_numeric_closure(tmp_path, monkeypatch, bump, stale):
    """Bumping a docs-only package leaves the sections current; bumping a
    dependency of the numeric packages makes them stale."""
    before, after = tmp_path / "before.lock", tmp_path / "after.lock"
    before.write_text(SAMPLE_LOCK, encoding="utf-8")
    name = bump.split("==")[0]
    after.write_text(SAMPLE_LOCK.replace(bump, f"{name}==99.0"), encoding="utf-8")
    hashes = []
    for lock in (before, after):
        monkeypatch.setattr(section_inputs, "LOCK", lock)
        hashes.append(section_inputs.inputs_hash("normalisation_and_stability", "unit_mismatch", "pinned"))
    assert (hashes[0] != hashes[1]) is stale


def test_the_real_closure_holds_the_drawing_and_torch_dependencies():
    closure = section_inputs.result_closure(lock_entries())
    assert {"numpy", "scipy", "matplotlib", "torch", "pillow", "kiwisolver", "fonttools", "sympy"} <= set(closure)
    assert not {"sphinx", "pytest", "furo", "pip-tools", "selenium", "cairosvg"} & set(closure)
