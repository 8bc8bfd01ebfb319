"""The page "Normalisation layers": which script serves which section.

The page checker reads this to scope every number in the prose to the
section's own scripts; the tests and the Makefile read it to find the
section scripts. Besides the section scripts, this folder holds the page's
shared code, which is not a section: norms.py (the normalisation layers),
noisy_norms.py (section 4's noisy batch norms),
mlp.py (the MLP of sections 3 to 5 and its training loop), and helper
modules for the Transformer sections.
"""

PAGE = "normalisation-layers"
PAGE_FILE = "docs/normalisation-layers.md"

# Numbered page section -> the section scripts whose quotes it may use.
# The experiments whose results the opening cards and the recap restate.
RESULT_SCRIPTS = (
    "batch_norm_learning_rate",
    "covariate_shift",
    "loss_smoothness",
    "layer_norm_batch",
    "norm_placement",
    "rms_norm_speed",
    "qk_norm",
)
SECTION_SCRIPTS = {
    1: (),  # the opening cards quote the sections' headline results (SHARED_QUOTES)
    2: ("lineage",),
    3: ("batch_norm_learning_rate",),
    4: ("covariate_shift",),
    5: ("loss_smoothness",),
    6: ("layer_norm_batch",),
    7: ("norm_placement",),
    8: ("norm_placement", "rms_norm_speed"),
    9: ("qk_norm",),
    10: (
        "across_seeds",
        "batch_norm_learning_rate",
        "covariate_shift",
        "loss_smoothness",
        "norm_placement",
        "qk_norm",
        "model_sizes",
    ),  # the table's run settings; reproducing this page
    11: (),  # diverged branches: prose, every fact from the reading list
    # The recap quotes no numbers; it names the scripts it summarises, so its
    # direction and scope words need the same claims as the sections' own.
    12: RESULT_SCRIPTS,
    13: ("layer_norm_batch", "norm_placement", "qk_norm"),  # check your understanding
    14: (),  # further reading
}

# Sections that run nothing but restate other sections' results (the
# opening cards): the claims of these scripts back their words
# (registry.claim_scripts); their numbers are SHARED_QUOTES.
SUMMARY_SCRIPTS = {1: RESULT_SCRIPTS}

# Sections whose words restate, with a pointer to it, a result of another
# section's script: sections 4 and 5 say what the other seeds and kernels
# showed and point to section 10's table, whose claims back those words;
# section 4 recalls where section 3's batch norm learned nothing.
RESTATED_SCRIPTS = {4: ("across_seeds", "batch_norm_learning_rate"), 5: ("across_seeds",)}

# Sections computed from the robustness report's data rather than from an
# experiment: the report does not rerun them (it would read its own output).
DERIVED_SECTIONS = ("across_seeds",)

# Sections that time the machine: `make figures` runs them alone, after the
# others, so no neighbour on the other core slows their timings.
TIMED_SECTIONS = ("rms_norm_speed",)

# Sections whose numbers come from torch alone. Under the pin torch's matrix
# products run on numpy's OpenBLAS (numeric_env), its other arithmetic in its
# own kernels and MKL's vector maths; numpy only copies, compares, selects
# (nanmax, nanargmax, median, isfinite) and formats the results, and plots
# them, operations whose results no SIMD loop changes. So numpy's X86_V2 loops
# cannot change them (the robustness report does not rerun them there, and
# checks that on their reduced runs), and of the two OpenBLAS variants the
# report reruns them under one (robustness_report.SAMPLING_OPENBLAS_VARIANT).
# A section that computes with numpy (a sum, an exp) does not belong here.
TORCH_ONLY_SECTIONS = (
    "batch_norm_learning_rate",
    "covariate_shift",
    "layer_norm_batch",
    "loss_smoothness",
    "norm_placement",
    "qk_norm",
    "rms_norm_speed",
    "model_sizes",
)

# Torch-only sections whose numbers two torch threads are expected to
# compute exactly as one does, at their tensor sizes. The robustness report
# checks it on each one's reduced run, which has the full run's widths and
# batch sizes, instead of retraining them on two threads; `make thread-check`
# (thread_check.py) trains a full run of each model of sections 3, 5, 7, 8
# and 9 on one and on two threads and compares them bit for bit (its committed
# record: figures/normalisation-layers/thread-check.json). Not listed:
# covariate_shift, whose input-move statistics reduce a (steps x features)
# history that at full length torch splits between two threads (the check
# trains two of its runs too, and finds those statistics' last bits differ),
# and any timing section, whose measurements change.
THREAD_EXACT_SECTIONS = (
    "batch_norm_learning_rate",
    "layer_norm_batch",
    "loss_smoothness",
    "norm_placement",
    "qk_norm",
    "model_sizes",
)

# Quotes any section may use besides its own: "<script>.<quote>".
SHARED_QUOTES: tuple[str, ...] = (
    "batch_norm_learning_rate.depth",
    "batch_norm_learning_rate.plain_largest_surviving_rate",
    "batch_norm_learning_rate.bn_largest_training_rate",
    "batch_norm_learning_rate.bn_best_accuracy",
    "batch_norm_learning_rate.plain_best_accuracy",
    "covariate_shift.act_accuracy_0_3",
    "covariate_shift.act_accuracy_1",
    "covariate_shift.bn_accuracy_1",
    "covariate_shift.rates",
    "layer_norm_batch.bn_change",
    "layer_norm_batch.ln_change",
    "norm_placement.layers",
    "norm_placement.high_rate",
    "norm_placement.final_pre_no_warmup",
    "norm_placement.final_post_no_warmup",
    "norm_placement.rms_gap",
    "qk_norm.rates",
    "qk_norm.largest_plain",
    "qk_norm.largest_qk",
)

# Structural numbers that are not results, as regular expressions matched
# against the prose around a number (the number itself is group "n").
STRUCTURAL = (
    r"[Ss]ections? (?P<n>[1-9][0-9]?)\b",
    r"[Ss]ections (?:[1-9], )*[1-9] and (?P<n>[1-9][0-9]?)\b",
    r"[Ss]ections [1-9][0-9]? to (?P<n>[1-9][0-9]?)\b",  # "the MLP of sections 3 to 5"
    r"first page's section (?P<n>[1-9])\b",
    # The year of a cited paper: "(Ioffe and Szegedy, 2015)", "Bjorck et al. (2018)".
    r"(?:[A-Z][A-Za-z]+|al\.|colleagues),? \(?(?P<n>(?:19|20)\d\d)\)?",
    r"^(?P<n>(?:19|20)\d\d)$",  # the year column of the lineage table
    r"GPT-(?P<n>2)\b",  # model names, not results
    r"ViT-(?P<n>22)B\b",
    r"AVX-(?P<n>512)\b",  # an instruction set, not a result
    # Names and titles in the reading list: "Gemma 2", "OLMo 2", "22 Billion", "the 2020s".
    r"\b(?:Gemma|OLMo) (?P<n>2)\b",
    r"\b(?P<n>2) OLMo 2\b",
    r"\((?P<n>(?:19|20)\d\d)\)",  # a year in the reading list: "Szegedy, C. (2015)"
    r"\b(?P<n>22) [Bb]illion\b",
    r"\bthe (?P<n>20[0-9]0)s\b",
)
