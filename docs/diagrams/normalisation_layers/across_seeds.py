"""Section 10, "Across three seeds": the page's headline results at seed
offsets 0, 1 and 2, and under the other numeric kernels at seed 0, read from
the robustness report's data (figures/normalisation-layers/robustness.json,
written by `make robustness`). No experiment of its own: it tabulates, per
run, the page's value (seed 0), the other two seeds, their mean ± sample standard
deviation and the range under the other kernels, and asserts what the
section's prose says about which comparisons held everywhere.

Because this section reads the report, the report does not run it
(DERIVED_SECTIONS in the package); `make figures` reruns it whenever the
report's data change.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path


from pagekit.section import main

INPUTS = (
    "../../../figures/normalisation-layers/robustness.json",
    "../../../figures/normalisation-layers/thread-check.json",
)
REPORT_DATA = Path(__file__).resolve().parent / INPUTS[0]
THREAD_CHECK = Path(__file__).resolve().parent / INPUTS[1]  # written by `make thread-check` (thread_check.py)
SEEDS = ("seed 0", "seed 1", "seed 2")
ACT, FEAT, GAIN = "noise on every activation", "noise per feature", "accuracy minus batch norm's"
TWO_THREADS = "torch-two-threads"
RATIO_MOVED = 1.1  # "the size of that gap did not hold": largest over smallest across the report's runs, above
LOW_RATE_ORDER = "at lr 0.003 post-norm ends below pre-norm"  # norm_placement's page-run claim
QK_LOW_RATE_ORDER = "on the page's run at lr 0.01 the run without QK-norm ends below the run with it"  # qk_norm's
# The page-run claims that failed at another seed: two orders of close runs,
# and four ties (a difference within 2 paired standard errors) that other
# seeds break.
TIE = "their difference is within 2 paired standard errors"
FAILED_ELSEWHERE = (
    (
        "covariate_shift",
        "on the page's run at lr 0.5 the activation noise network ties with batch norm: "
        "the difference is within 2 paired standard errors",
    ),
    ("norm_placement", f"on the page's run at lr 0.01 the two pre-norm runs tie: {TIE}"),
    ("norm_placement", f"at lr 0.003 the two placements tie: {TIE}"),
    ("norm_placement", LOW_RATE_ORDER),
    ("qk_norm", f"on the page's run at lr 0.01 the runs with and without QK-norm tie: {TIE}"),
    ("qk_norm", QK_LOW_RATE_ORDER),
)
LAYER_NORM_UNMOVED = "layer norm's change of example 0's output between the batches is exactly 0"
RMS_MATCHES = (
    "|RMS norm - layer norm| final validation loss, lr 0.01 pre-norm without warmup <= 0.03"  # norm_placement's
)
# The claims section 10's summary restates, with the key of this section's
# claim that each held (in every run, or at the page's seeds under every
# kernel): the page's `% backs across_seeds:<key>` lines tie the summary's
# phrases to it.
SUMMARY_KEYS = {
    ("layer_norm_batch", LAYER_NORM_UNMOVED): "layer-norm-never-moved",
    ("norm_placement", LOW_RATE_ORDER): "post-norm-ahead-at-page-seeds",
    ("norm_placement", RMS_MATCHES): "rms-tolerance-met-everywhere",
}

# (row key, page section, section script, quote element, the row's label in
# the page's table): the runs the table shows. The label is each quote's run
# name, so the page check refuses a row label moved to another row's numbers.
ROWS = (
    ("plain_best", 3, "batch_norm_learning_rate", "plain_best_accuracy", "plain MLP, best validation accuracy"),
    ("bn_best", 3, "batch_norm_learning_rate", "bn_best_accuracy", "batch-norm MLP, best validation accuracy"),
    ("act_gain_low", 4, "covariate_shift", "act_gain_0_1", f"{ACT}, {GAIN}, lr 0.1"),
    ("act_gain_high", 4, "covariate_shift", "act_gain_0_3", f"{ACT}, {GAIN}, lr 0.3"),
    ("feat_gain_low", 4, "covariate_shift", "feat_gain_0_1", f"{FEAT}, {GAIN}, lr 0.1"),
    ("feat_gain_high", 4, "covariate_shift", "feat_gain_0_3", f"{FEAT}, {GAIN}, lr 0.3"),
    ("act_gain_top", 4, "covariate_shift", "act_gain_1", f"{ACT}, {GAIN}, lr 1"),
    ("feat_gain_top", 4, "covariate_shift", "feat_gain_1", f"{FEAT}, {GAIN}, lr 1"),
    ("smoothness_ratio", 5, "loss_smoothness", "median_ratio", "median smoothness, plain over batch norm, lr 0.1"),
    ("bn_beta_top", 5, "loss_smoothness", "bn_sweep_beta_median[2]", "batch norm's median smoothness, lr 1"),
    ("bn_weight_top", 5, "loss_smoothness", "bn_sweep_weight_norm[2]", "batch norm's median hidden weight norm, lr 1"),
    ("bn_change", 6, "layer_norm_batch", "bn_change", "batch norm: largest change of example 0's output"),
    ("post_low", 7, "norm_placement", "final_post_low", "post-norm, lr 0.003"),
    ("pre_low", 7, "norm_placement", "final_pre_low", "pre-norm, lr 0.003"),
    ("post_warmup", 7, "norm_placement", "final_post_warmup", "post-norm, lr 0.01, warmup"),
    ("post_no_warmup", 7, "norm_placement", "final_post_no_warmup", "post-norm, lr 0.01, no warmup"),
    ("pre_warmup", 7, "norm_placement", "final_pre_warmup", "pre-norm, lr 0.01, warmup"),
    ("pre_no_warmup", 7, "norm_placement", "final_pre_no_warmup", "pre-norm, lr 0.01, no warmup"),
    ("rms_pre_no_warmup", 8, "norm_placement", "final_rms_pre_no_warmup", "RMS norm, pre-norm, lr 0.01, no warmup"),
    ("rms_gap", 8, "norm_placement", "rms_gap", "RMS norm minus layer norm, pre-norm, lr 0.01, no warmup, absolute"),
    ("logit_plain_low", 9, "qk_norm", "largest_plain[0]", "largest logit, no QK-norm, lr 0.01"),
    ("logit_plain_mid", 9, "qk_norm", "largest_plain[1]", "largest logit, no QK-norm, lr 0.03"),
    ("logit_plain_high", 9, "qk_norm", "largest_plain[2]", "largest logit, no QK-norm, lr 0.1"),
    ("logit_qk_low", 9, "qk_norm", "largest_qk[0]", "largest logit, QK-norm, lr 0.01"),
    ("logit_qk_mid", 9, "qk_norm", "largest_qk[1]", "largest logit, QK-norm, lr 0.03"),
    ("logit_qk_high", 9, "qk_norm", "largest_qk[2]", "largest logit, QK-norm, lr 0.1"),
    ("loss_plain_high", 9, "qk_norm", "final_plain[2]", "validation loss, no QK-norm, lr 0.1"),
    ("loss_qk_high", 9, "qk_norm", "final_qk[2]", "validation loss, QK-norm, lr 0.1"),
)
# The table's columns, as its header names them.
SEED_COLUMNS = ("seed offset 0", "seed offset 1", "seed offset 2")
SPREAD_COLUMN, KERNEL_COLUMN = "mean ± sample sd", "other kernels, seed offset 0"


def text_format(text: str) -> str:
    """The format spec that writes a value as the page writes this quote:
    the same number of decimals, and thousands separators if it has them."""
    decimals = len(text.split(".", 1)[1]) if "." in text else 0
    return ("," if "," in text else "") + f".{decimals}f"


def load_report() -> dict:
    try:
        data = json.loads(REPORT_DATA.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SystemExit(f"{REPORT_DATA.name} is missing: run `make robustness PAGE=normalisation-layers`") from None
    return data["sections"]


def compute(section):
    q = section.quote
    sections = load_report()
    rows = []
    for key, number, script, element, label in ROWS:
        quote = sections[script]["quotes"][element]
        runs = sections[script]["runs"]
        fmt = text_format(quote["text"]["seed 0"])
        seeds = [quote["value"][s] for s in SEEDS]
        kernels = [quote["value"][r] for r in runs if r not in SEEDS[1:]]  # the page's run and the variants
        q(f"{key}_seeds", seeds, fmt, runs=[(label, column) for column in SEED_COLUMNS])
        q(f"{key}_mean", statistics.fmean(seeds), fmt, run=(label, SPREAD_COLUMN))
        # the sample standard deviation (divisor n − 1)
        q(f"{key}_sd", statistics.stdev(seeds), fmt, run=(label, SPREAD_COLUMN))
        spread = q(f"{key}_kernels", (min(kernels), max(kernels)), fmt, runs=[(label, KERNEL_COLUMN)] * 2)
        rows.append((key, number, spread))
    q("seed_count", len(SEEDS), "d")
    # Section 5's momentum guide, over the report's runs: a surviving plain
    # network's largest probe can sit on either side of it, so it is no
    # divergence line (and no claim of section 5's own).
    smooth = sections["loss_smoothness"]["quotes"]
    momentum_guide = smooth["momentum_guide"]["value"]["seed 0"]
    survived = smooth["plain_accuracy"]["value"]  # a run where the plain network diverged has no accuracy
    above_and_survived = {
        run: v for run, v in smooth["plain_beta_max"]["value"].items() if run in survived and v > momentum_guide
    }
    q("momentum_guide", momentum_guide, ".0f")
    q(
        "plain_beta_max_highest_surviving",
        max(v for run, v in smooth["plain_beta_max"]["value"].items() if run in survived),
        ".3g",
    )
    section.claim(
        "in some run of the report the plain network survived section 5's 300 steps with its largest "
        "beta_hat after step 50 above the momentum guide 2(1 + momentum)/lr",
        bool(above_and_survived),
        f"{above_and_survived}",
        every_seed=False,
        key="above-the-momentum-guide-without",
    )
    # Section 5's ratio of the two networks' median probes: its size moves
    # from run to run (only its side of one is claimed there).
    ratios = smooth["median_ratio"]["value"]
    section.claim(
        f"section 5's plain-over-batch-norm median smoothness ratio differs by over {RATIO_MOVED - 1:.0%} "
        "between runs of the report",
        max(ratios.values()) > RATIO_MOVED * min(ratios.values()),
        f"{ratios}",
        every_seed=False,
        key="smoothness-ratio-moved",
    )
    # Section 4's noise per feature at lr 1, against batch norm, over the
    # report's runs: below zero at every seed, above it under two kernels, so
    # its sign is the rounding's (the claim states only that it changes).
    feature_gain = sections["covariate_shift"]["quotes"]["feat_gain_1"]["value"]
    section.claim(
        "noise per feature minus batch norm at lr 1 is below zero in some run of the report and above zero in another",
        min(feature_gain.values()) < 0 < max(feature_gain.values()),
        f"{feature_gain}",
        every_seed=False,
        key="feature-noise-at-1-changes-sign",
    )
    # Which rows the other kernels moved, for the prose.
    moved = [key for key, _, (low, high) in rows if low != high]
    q("rows", len(rows), "d")
    q("rows_moved", len(moved), "d")
    if section.echo:
        print("moved by other kernels at the printed precision:", ", ".join(moved) or "none")
    # Two threads: a section the report reran there kept every printed
    # quote; one it did not rerun there (thread-exact) gave the same values
    # on its reduced run, which the report checked.
    threads_moved = [
        f"{script}.{element}"
        for script, data in sections.items()
        for element, quote in data["quotes"].items()
        if not quote["measured"]
        and TWO_THREADS in quote["text"]
        and quote["text"][TWO_THREADS] != quote["text"]["seed 0"]
    ]
    threads_checked = [
        script for script, data in sections.items() if (data.get("skip_check") or {}).get("same", {}).get(TWO_THREADS)
    ]
    threads_unchecked = [
        script
        for script, data in sections.items()
        if TWO_THREADS in data["skipped"]
        and script not in threads_checked
        and not data["skipped"][TWO_THREADS].startswith("it never loads torch")
    ]
    q("thread_exact_sections", len(threads_checked), "d")
    # The full-size check of the thread skip, a full run of each model
    # (tests/test_thread_check.py keeps its record current).
    try:
        thread_check = json.loads(THREAD_CHECK.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SystemExit(f"{THREAD_CHECK.name} is missing: run `make thread-check`") from None
    exact = [run for run in thread_check["runs"] if not run["may_differ"]]  # the thread-exact sections' runs
    allowed = [run for run in thread_check["runs"] if run["may_differ"]]  # section 4's
    changed = [f"{run['run']}: {run['difference']}" for run in exact if not run["same_bits"]]
    q("thread_check_runs", len(exact), "d")
    section.claim(
        "every full run of a thread-exact section that `make thread-check` trained on one and on two "
        "torch threads gave the same bits on both",
        bool(exact) and not changed,
        "; ".join(changed),
        key="all-of-them-came-out",
    )
    section.claim(
        "section 4's full runs in `make thread-check` changed on two threads, and only in their input-move statistics",
        bool(allowed) and all(run["differing"] and set(run["differing"]) <= set(run["may_differ"]) for run in allowed),
        "; ".join(f"{run['run']}: {', '.join(run['differing']) or 'nothing'}" for run in allowed),
        key="while-the-losses-accuracies-and",
    )
    section.claim(
        f"no computed number of the page changed under {TWO_THREADS}: no printed quote of a rerun "
        "section, no value of a thread-exact section's reduced run",
        not threads_moved and not threads_unchecked,
        ", ".join(threads_moved + threads_unchecked),
        key="two-threads-changed-no-number",
    )

    # The claims of every experiment section, over every run the report made.
    every, page_only, page_only_elsewhere, every_failed = 0, 0, [], []
    summarised = set()
    for script, data in sections.items():
        for claim in data["claims"]:
            held = claim["holds"]
            key = SUMMARY_KEYS.get((script, claim["statement"]))
            summarised.update([(script, claim["statement"])] if key else [])
            if claim["every_seed"]:
                every += 1
                if not all(held.values()):
                    every_failed.append(f"{script}: {claim['statement']}")
                section.claim(
                    f"{script}: '{claim['statement']}' held in every run of the report",
                    all(held.values()),
                    f"{held}",
                    key=key,
                )
            else:
                page_only += 1
                at_seed_0 = [v for r, v in held.items() if r not in SEEDS[1:]]  # the page's run and the variants
                section.claim(
                    f"{script}: '{claim['statement']}' held at seed 0 under every kernel",
                    all(at_seed_0),
                    f"{held}",
                    key=key,
                )
                if not all(held.values()):
                    page_only_elsewhere.append(f"{script}: {claim['statement']}")
    missing = sorted(set(SUMMARY_KEYS) - summarised)  # a renamed claim must not leave its phrases unbacked
    section.claim(
        "every claim the summary restates is a claim of the report",
        not missing,
        "; ".join(f"{s}: {c}" for s, c in missing),
    )
    section.claim(
        "every claim the scripts make for every seed held in every run of the report",
        not every_failed,
        "; ".join(every_failed),
        key="claims-that-must-hold-at",
    )
    q("every_seed_claims", every, "d")
    q("page_run_claims", page_only, "d")
    q("page_run_claims_failed_elsewhere", len(page_only_elsewhere), "d")
    expected = sorted(f"{script}: {statement}" for script, statement in FAILED_ELSEWHERE)
    section.claim(
        "the page-run claims that failed at another seed are exactly these: "
        + "; ".join(f"{script}'s '{statement}'" for script, statement in FAILED_ELSEWHERE),
        sorted(page_only_elsewhere) == expected,
        "; ".join(page_only_elsewhere),
        key="page-run-failures-elsewhere",
    )
    if section.echo:
        print("page-run claims that failed at another seed:", *page_only_elsewhere, sep="\n  ")
    return {}


NO_FIGURES = "the section is a table"


def draw(section, results):
    """No figure: the section is a table."""


if __name__ == "__main__":
    main(__name__)
