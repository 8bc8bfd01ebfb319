"""A claim records the form of its condition (record.condition_form):
the source text of the test, read from the calling line's span, and the
module constants it reads with their values; for claim_bound the measured
side, relation and bound; for agree the two computations and tolerances."""

from __future__ import annotations

import importlib.util

from pagekit.section import Section

PROBE = """
FAR_ABOVE = 0.3
SIZES = (2, 4)


def claims(section, gap, local_bound=7):
    section.claim(f"gap at least {FAR_ABOVE:g}",
                  gap >= FAR_ABOVE
                  and gap < local_bound)
    section.claim_bound("gap", gap * SIZES[1], ">", FAR_ABOVE)
    section.agree("twice the gap and the gap doubled", 2 * gap, gap + gap, atol=1e-12)
    for size in SIZES:
        section.claim(holds=gap > size / 100, statement=f"gap above {size}%")
"""


def load_probe(tmp_path):
    path = tmp_path / "probe_claims.py"
    path.write_text(PROBE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("probe_claims", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_claim_records_its_condition_and_constants(tmp_path):
    section = Section(page="probe", name="probe", echo=False)
    load_probe(tmp_path).claims(section, 0.5)
    forms = [(c.condition, c.constants) for c in section.claims]
    assert forms == [
        ("gap >= FAR_ABOVE and gap < local_bound", {"FAR_ABOVE": 0.3}),  # a local is a result, not a constant
        ("gap * SIZES[1] > FAR_ABOVE", {"SIZES": [2, 4], "FAR_ABOVE": 0.3}),
        ("allclose(2 * gap, gap + gap, rtol=0.0, atol=1e-12)", {}),
        ("gap > size / 100", {}),
        ("gap > size / 100", {}),
    ]
    assert section.record()["claims"][1]["condition"] == "gap * SIZES[1] > FAR_ABOVE"


def test_a_claim_without_source_records_no_form():
    """A claim made from code with no file (exec'd text) still records, with
    no condition, rather than failing."""
    section = Section(page="probe", name="probe", echo=False)
    exec("section.claim('one is one', 1 == 1)", {"section": section})
    assert (section.claims[0].condition, section.claims[0].constants) == (None, {})


SWEEP_PROBE = """
RATES = (0.1, 0.3, 1)


def claims(section, accuracies):
    section.sweep_claim(
        "the network trains",
        {rate: a > 0.5 for rate, a in zip(RATES, accuracies)},
        {rate: f"{a:.3f}" for rate, a in zip(RATES, accuracies)},
        over="learning rate",
        key="trains",
    )
"""


def test_a_sweep_claim_records_every_point_and_names_the_failing_ones(tmp_path):
    """A sweep claim (issue 39): the statement names its points, the record
    keeps each point's outcome (what the robustness report shows, point by
    point, and what a range word in the prose needs), its condition is the
    points' source, and it fails when one point fails, naming that point."""
    path = tmp_path / "sweep_probe.py"
    path.write_text(SWEEP_PROBE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("sweep_probe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    section = Section(page="probe", name="probe", echo=False)
    module.claims(section, [0.8, 0.7, 0.3])
    [claim] = section.record()["claims"]
    assert claim["statement"] == "the network trains, at every learning rate of 0.1, 0.3, 1"
    assert claim["sweep"] == {"over": "learning rate", "points": {"0.1": True, "0.3": True, "1": False}}
    assert claim["holds"] is False and claim["detail"] == "at learning rate 1: 0.300"
    assert claim["condition"] == "{rate: a > 0.5 for rate, a in zip(RATES, accuracies)}"
    assert claim["constants"] == {"RATES": [0.1, 0.3, 1]}


def test_a_sweep_claim_needs_two_points():
    import pytest

    from pagekit.numformat import QuoteError

    section = Section(page="probe", name="probe", echo=False)
    with pytest.raises(QuoteError, match="at least two points"):
        section.sweep_claim("one point", {0.1: True}, over="learning rate")
