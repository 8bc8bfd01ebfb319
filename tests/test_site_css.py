"""The site's stylesheet parses cleanly: a broken comment once turned the rule
that hides furo's "back to top" pill on phones, and the text before it, into
one invalid rule the browser dropped without a word (site review round 3, M1).
Parsed with tinycss2, the CSS parser the SVG renderer (cairosvg) uses."""

from __future__ import annotations

import tinycss2

from conftest import REPO_ROOT

SITE_CSS = REPO_ROOT / "docs" / "_static" / "site.css"
DECLARATION_AT_RULES = {"page", "font-face"}  # their blocks hold declarations, not rules


def parse_errors(rules, where: str = "") -> list[str]:
    """Every parse error in a list of rules, nested blocks included."""
    found = []
    for rule in rules:
        if rule.type == "error":
            found.append(f"line {rule.source_line}{where}: {rule.message}")
        elif rule.type == "at-rule" and rule.content is not None:
            inner = f" (inside @{rule.lower_at_keyword})"
            if rule.lower_at_keyword in DECLARATION_AT_RULES:
                found += declaration_errors(rule.content, inner)
            else:
                found += parse_errors(
                    tinycss2.parse_rule_list(rule.content, skip_comments=True, skip_whitespace=True), inner
                )
        elif rule.type == "qualified-rule":
            found += declaration_errors(rule.content, where)
    return found


def declaration_errors(content, where: str) -> list[str]:
    return [
        f"line {d.source_line}{where}: {d.message}"
        for d in tinycss2.parse_declaration_list(content, skip_comments=True, skip_whitespace=True)
        if d.type == "error"
    ]


def stylesheet():
    return tinycss2.parse_stylesheet(SITE_CSS.read_text(encoding="utf-8"), skip_comments=True, skip_whitespace=True)


def test_the_site_css_has_no_parse_error():
    assert parse_errors(stylesheet()) == []


def test_a_broken_comment_is_caught(tmp_path):
    broken = SITE_CSS.read_text(encoding="utf-8").replace("/* furo's", "furo's", 1)
    assert broken != SITE_CSS.read_text(encoding="utf-8"), "the comment this test breaks has moved"
    assert parse_errors(tinycss2.parse_stylesheet(broken, skip_comments=True, skip_whitespace=True))


def test_phones_hide_the_back_to_top_pill():
    """At phone widths the rule that hides the pill is a real rule of a
    max-width media query."""
    hidden = []
    for rule in stylesheet():
        if (
            rule.type == "at-rule"
            and rule.lower_at_keyword == "media"
            and "max-width" in tinycss2.serialize(rule.prelude)
        ):
            for inner in tinycss2.parse_rule_list(rule.content, skip_comments=True, skip_whitespace=True):
                if inner.type == "qualified-rule" and ".back-to-top" in tinycss2.serialize(inner.prelude):
                    hidden.append(tinycss2.serialize(inner.content))
    assert any("display" in body and "none" in body for body in hidden), hidden


def _shadow_colours(rules, within: str = "") -> dict[str, str]:
    """Every declaration of --site-scroll-shadow: its selector (inside its
    media query) and its value."""
    found = {}
    for rule in rules:
        if rule.type == "at-rule" and rule.lower_at_keyword == "media" and rule.content is not None:
            inner = tinycss2.parse_rule_list(rule.content, skip_comments=True, skip_whitespace=True)
            found |= _shadow_colours(inner, f"@media {tinycss2.serialize(rule.prelude).strip()} ")
        elif rule.type == "qualified-rule":
            for d in tinycss2.parse_declaration_list(rule.content, skip_comments=True, skip_whitespace=True):
                if d.type == "declaration" and d.name == "--site-scroll-shadow":
                    found[within + tinycss2.serialize(rule.prelude).strip()] = tinycss2.serialize(d.value).strip()
    return found


def test_scroll_shadows_show_on_the_light_and_the_dark_theme():
    """The shadow that says a wide table or formula scrolls is dark on the
    light theme and light on the dark one (a dark shadow on a dark page does
    not show), whether the reader chose dark or the system did."""
    colours = _shadow_colours(stylesheet())
    assert "site-scroll-shadow" in SITE_CSS.read_text(encoding="utf-8").split("radial-gradient", 1)[1], (
        "the scroll shadows do not use --site-scroll-shadow"
    )

    def lightness(value: str) -> float:
        red, green, blue = (float(x) for x in value.split("(")[1].split(",")[:3])
        return (red + green + blue) / 3

    light = [v for k, v in colours.items() if k == ":root"]
    dark = [v for k, v in colours.items() if "dark" in k]
    assert light and lightness(light[0]) < 128, f"the light theme's scroll shadow: {colours}"
    assert len(dark) == 2 and all(lightness(v) > 128 for v in dark), f"the dark theme's scroll shadows: {colours}"
