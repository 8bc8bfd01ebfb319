"""numpy's own SIMD dispatch is pinned like the rest of the numeric
environment: the pin names groups numpy 2.4 really dispatches, numpy takes
them without a word, a caller's NPY_* variables cannot override them, the
numbers record the level in use; and numbers made where the pin did not hold
are refused on a machine where it does."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from pagekit import numeric_env
from pagekit import run_sections
from pagekit.check_page import PageError, check_page as run_check
from conftest import REPO_ROOT, skip_bit_level
from test_page_check import BODY, QUOTES, make_page

DIAGRAMS = REPO_ROOT / "docs" / "diagrams"
# In a fresh interpreter: apply the pin, load numpy, say what it runs.
PROBE = (
    "from pagekit import numeric_env; numeric_env.apply(); "
    "import numpy, os; print(numeric_env.numpy_simd()); print(numeric_env.record()['honoured']); "
    "print(os.environ.get('NPY_ENABLE_CPU_FEATURES'))"
)


def probe(**env: str) -> list[str]:
    """numpy's dispatch level, the record's "honoured" and any
    NPY_ENABLE_CPU_FEATURES left, in a child whose ImportWarnings are errors
    (numpy warns that way about a name it does not dispatch)."""
    # As from a shell: without what this process's own pin set.
    ours = {
        *numeric_env.PIN,
        *numeric_env.CLEARED,
        numeric_env.VARIANT_ENV,
        numeric_env.UNPINNED_ENV,
        numeric_env.WARNED_ENV,
    }
    clean = {k: v for k, v in os.environ.items() if k not in ours}
    done = subprocess.run(
        [sys.executable, "-W", "error::ImportWarning", "-c", PROBE],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_pin_names_every_numpy_group_above_x86_v3():
    """A numpy that dispatches a new group (say AVX10) must make this fail,
    or its loops would run unpinned on the machines that have it."""
    from numpy._core._multiarray_umath import __cpu_dispatch__

    groups = list(__cpu_dispatch__)
    assert numeric_env.NUMPY_CAP in groups
    above = groups[groups.index(numeric_env.NUMPY_CAP) + 1 :]
    assert set(above) == set(numeric_env.NUMPY_ABOVE_V3), f"numpy dispatches {groups}: update NUMPY_ABOVE_V3"
    assert numeric_env.PIN["NPY_DISABLE_CPU_FEATURES"].split() == list(numeric_env.NUMPY_ABOVE_V3)


def test_numpy_runs_x86_v3_under_the_pin_whatever_the_caller_sets():
    skip_bit_level()
    assert probe() == ["X86_V3", "True", "None"]
    # The caller's own choice of numpy's loops loses to the pin.
    assert probe(NPY_DISABLE_CPU_FEATURES="X86_V3") == ["X86_V3", "True", "None"]
    assert probe(NPY_ENABLE_CPU_FEATURES="X86_V4 AVX512_ICL") == ["X86_V3", "True", "None"]


def test_the_numpy_variant_lowers_the_dispatch_to_the_baseline():
    skip_bit_level()
    assert probe(**{numeric_env.VARIANT_ENV: "numpy-x86-v2"}) == ["baseline", "True", "None"]


def test_the_unpinned_switch_runs_the_library_defaults_and_says_so():
    """The test-only switch behaves as a machine without x86-64-v3: numpy
    runs what it picks on its own for this CPU, and the record says the pin
    did not hold."""
    unpinned = {k: v for k, v in os.environ.items() if k not in numeric_env.PIN}
    own_choice = subprocess.run(
        [
            sys.executable,
            "-c",
            "from numpy._core._multiarray_umath import __cpu_dispatch__ as d, "
            "__cpu_features__ as f; print(([g for g in d if f[g]] or ['baseline'])[-1])",
        ],
        env=unpinned,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    assert probe(**{numeric_env.UNPINNED_ENV: "1"})[:2] == [own_choice, "False"]


def test_numbers_files_record_the_same_environment_everywhere_the_pin_holds():
    """What a committed numbers file says of its environment: nothing of this
    very CPU (no model name, no AVX-512 groups), so every machine that honours
    the pin writes the same bytes."""
    skip_bit_level()
    for path in sorted((REPO_ROOT / "figures").glob("*/numbers/*.json")):
        environment = json.loads(path.read_text(encoding="utf-8"))["environment"]
        assert (
            environment["honoured"],
            environment["numpy_simd"],
            environment["openblas_core"],
            environment.get("torch_matmul"),
        ) == (True, "X86_V3", "Haswell", "openblas"), f"{path.relative_to(REPO_ROOT)}: {environment}"


FOREIGN = {"honoured": False, "machine": "arm64", "numpy_simd": "ASIMDHP", "openblas_core": "neoversen1"}


def test_check_refuses_numbers_made_where_the_pin_did_not_hold(tmp_path):
    skip_bit_level()
    config, page, paths = make_page(tmp_path, BODY)
    (paths["numbers_dir"] / "demo.json").write_text(
        json.dumps({"quotes": QUOTES, "figures": [], "environment": FOREIGN})
    )
    with pytest.raises(PageError, match=re.escape("made where the numeric pin did not hold (arm64")) as error:
        run_check(config, **paths)
    assert "`make -B figures`" in str(error.value)


def test_figures_reruns_a_foreign_numbers_file(tmp_path, monkeypatch):
    """Its inputs hash may be current, but it is not the page's run here."""
    skip_bit_level()
    script = next(s for s in run_sections.all_sections() if s.package == "normalisation_and_stability")
    record = json.loads(script.numbers_path.read_text(encoding="utf-8"))
    assert run_sections.stale_reason(script) is None
    foreign = tmp_path / "numbers.json"
    foreign.write_text(json.dumps({**record, "environment": {**record["environment"], **FOREIGN}}))
    monkeypatch.setattr(type(script), "numbers_path", property(lambda self: foreign))
    assert run_sections.stale_reason(script) == "its numbers were made where the numeric pin did not hold"


def test_a_machine_that_cannot_honour_the_pin_keeps_its_own_numbers(monkeypatch):
    """There the author's loop works on what that machine makes."""
    monkeypatch.setenv(numeric_env.UNPINNED_ENV, "1")
    assert numeric_env.foreign({"environment": FOREIGN}) is None


def test_a_notebook_kernel_that_loaded_numpy_first_runs_on_and_says_so():
    """Colab's kernel loads numpy before a notebook's first cell: the
    notebook's pin (apply_late) then carries on under a label that is never
    the page's own run, with a note, instead of the error a script gets."""
    # A kernel started outside the project: none of the pin's variables set yet.
    kernel = {k: v for k, v in os.environ.items() if k not in numeric_env.PIN and k != numeric_env.WARNED_ENV}

    def run(*lines: str) -> subprocess.CompletedProcess:
        code = "\n".join(lines)
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=kernel)

    imports = ("import numpy", "from pagekit import numeric_env")
    late = run(
        *imports,
        "print(numeric_env.apply_late())",
        "from pagekit.record import Section",
        "print(Section(page='demo', name='demo').is_page_run)",
    )
    assert late.stdout.split() == [numeric_env.LATE, "False"], late.stderr
    assert "numpy was loaded before" in late.stderr
    script = run(*imports, "numeric_env.applied_variant()")
    assert script.returncode != 0 and "must be applied before numpy" in script.stderr
    fresh = run("from pagekit import numeric_env", "print(numeric_env.apply_late())")
    assert fresh.stdout.split() == [numeric_env.applied_variant()]
