"""Everything a section script imports, in one place.

A section script defines two functions and ends with ``main(__name__)``:

    def compute(section):        # numbers, quotes and claims; returns results
    def draw(section, results):  # figures, every drawn number via section.text()

``compute`` draws randomness only from ``section.rng(k)`` or
``section.torch_generator(k)`` (seeds shifted by the seed offset), registers
every number the page quotes with ``section.quote`` and states the claims the
prose relies on with ``section.claim`` / ``section.agree``. ``draw`` builds
figures with ``new_figure`` (axes placed by hand from margins in inches) or
``new_cell_figure`` and saves them with ``section.save_figure``.
``run_section`` runs both and writes ``figures/<page>/numbers/<section>.json``
atomically; the runner, the tests and the robustness report go through it.

Import it before numpy or torch: it pins the numeric environment first.
"""

from pagekit import numeric_env

NUMERIC_VARIANT = numeric_env.applied_variant()

from pagekit.atomic import atomic_write, write_json_atomically, write_text_atomically
from pagekit.cli import main, run_section, section_module
from pagekit.numformat import MINUS, TIMES, QuoteError, format_number, power_of_two, scientific
from pagekit.torch_loader import import_torch
from pagekit.record import ClaimsFailed, Section
from pagekit.style import (
    PALETTE,
    STYLE,
    TEXT_PALETTE,
    draw_cell_rows,
    fit_cell_figure,
    label_line_ends,
    log_axis,
    new_cell_figure,
    new_figure,
    nice_limits,
    on_phone,
    text_colour,
    wrap_to_width,
)

__all__ = [
    "NUMERIC_VARIANT",
    "atomic_write",
    "write_json_atomically",
    "write_text_atomically",
    "main",
    "run_section",
    "section_module",
    "MINUS",
    "TIMES",
    "QuoteError",
    "format_number",
    "power_of_two",
    "scientific",
    "import_torch",
    "ClaimsFailed",
    "Section",
    "PALETTE",
    "STYLE",
    "TEXT_PALETTE",
    "draw_cell_rows",
    "fit_cell_figure",
    "label_line_ends",
    "log_axis",
    "new_cell_figure",
    "new_figure",
    "nice_limits",
    "on_phone",
    "text_colour",
    "wrap_to_width",
]
