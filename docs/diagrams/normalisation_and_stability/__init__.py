"""The page "Normalisation and stability": which script serves which section.

The page checker reads this to scope every number in the prose to the
section's own scripts; the tests and the Makefile read it to find the
section scripts. Section scripts are the modules of this folder.
"""

PAGE = "normalisation-and-stability"
PAGE_FILE = "docs/normalisation-and-stability.md"

# The experiments' scripts, in page order (sections 1 to 6).
EXPERIMENTS = (
    "unit_mismatch",
    "norm_worked_vector",
    "batch_dependence",
    "residual_placement",
    "mixed_precision",
    "loss_spike_replay",
)

# Numbered page section -> the section scripts whose quotes it may use.
# Sections 7 (reading list), 8 (Python) and 9 (robustness) quote no computed numbers.
SECTION_SCRIPTS = {
    1: ("unit_mismatch",),
    2: ("norm_worked_vector",),
    3: ("batch_dependence",),
    4: ("residual_placement",),
    5: ("mixed_precision",),
    6: ("loss_spike_replay",),
    7: (),
    8: (),
    # How robust the results are: words about the robustness report, which
    # summarise every experiment's claims, so it names their scripts.
    9: EXPERIMENTS,
    # The recap quotes no numbers; it names the scripts it summarises, so its
    # direction and scope words need the same claims as the sections' own.
    10: EXPERIMENTS,
    # Check your understanding: the answers quote sections 1, 3 and 5.
    11: ("unit_mismatch", "batch_dependence", "mixed_precision"),
}

# Sections that run nothing but restate other sections' results: "Using it
# in Python" puts the advice of sections 1, 2, 4, 5 and 6 into one block of
# code (its printed numbers are the block's own, checked by the test that
# runs it), so the claims of those sections' scripts back its words
# (registry.claim_scripts).
SUMMARY_SCRIPTS = {
    8: ("unit_mismatch", "norm_worked_vector", "residual_placement", "mixed_precision", "loss_spike_replay")
}

# Sections whose words restate, with a pointer to it, a result of another
# section's script: section 5 says its right formats do not prevent the
# spike that section 6 replays in float64.
RESTATED_SCRIPTS = {5: ("loss_spike_replay",)}

# Quotes any section may use besides its own: "<script>.<quote>".
SHARED_QUOTES: tuple[str, ...] = ()

# Structural numbers that are not results, as regular expressions matched
# against the prose around a number (the number itself is group "n").
STRUCTURAL = (
    r"[Ss]ections? (?P<n>[1-9]|1[01])\b",
    r"[Ss]ections (?:[1-9], )*(?:[1-9] and )(?P<n>[1-9])\b",
    # Years of the works cited ("Ba et al. 2016", "Liu and colleagues, 2020", "(2016)").
    r"(?:et al\.|colleagues|[A-Z][\w-]+),? (?P<n>(?:19|20)\d\d)\b",
    r"\((?P<n>(?:19|20)\d\d)\)",
    r"\b(?P<n>4|8|16|32)-bit\b",  # names of number formats, not results
)
