"""The page "Normalisation layers": which script serves which section.

The page checker reads this to scope every number in the prose to the
section's own scripts; the tests and the Makefile read it to find the
section scripts. Besides the section scripts, this folder holds the page's
shared code, which is not a section: norms.py (the normalisation layers),
mlp.py (the MLP of sections 3 to 5 and its training loop), and helper
modules for the Transformer sections.
"""

PAGE = "normalisation-layers"
PAGE_FILE = "docs/normalisation-layers.md"

# Numbered page section -> the section scripts whose quotes it may use.
SECTION_SCRIPTS = {
    1: (),  # the opening cards quote the sections' headline results (SHARED_QUOTES)
    2: ("lineage",),
    3: ("batch_norm_learning_rate",),
    4: ("covariate_shift",),
    5: ("loss_smoothness",),
    6: ("layer_norm_batch",),
}

# Quotes any section may use besides its own: "<script>.<quote>".
SHARED_QUOTES: tuple[str, ...] = (
    "batch_norm_learning_rate.depth",
    "batch_norm_learning_rate.plain_largest_surviving_rate",
    "batch_norm_learning_rate.bn_largest_training_rate",
    "batch_norm_learning_rate.bn_best_accuracy",
    "batch_norm_learning_rate.plain_best_accuracy",
    "layer_norm_batch.bn_change",
    "layer_norm_batch.ln_change",
)

# Structural numbers that are not results, as regular expressions matched
# against the prose around a number (the number itself is group "n").
STRUCTURAL = (
    r"[Ss]ections? (?P<n>[1-9])\b",
    r"first page's section (?P<n>[1-9])\b",
    # The year of a cited paper: "(Ioffe and Szegedy, 2015)", "Bjorck et al. (2018)".
    r"(?:[A-Z][A-Za-z]+|al\.),? \(?(?P<n>(?:19|20)\d\d)\)?",
    r"^(?P<n>(?:19|20)\d\d)$",  # the year column of the lineage table
    r"GPT-(?P<n>2)\b",  # model names, not results
    r"ViT-(?P<n>22)B\b",
)
