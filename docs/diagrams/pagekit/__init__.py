"""pagekit: the machinery that turns section scripts into checked pages.

A page is a package beside this one (docs/diagrams/<page_package>/) whose
section scripts compute and print every number the page quotes. The modules:

- numeric_env, openblas_matmul, kernel_fingerprint: one numeric environment
  for every run, and the check that this machine reproduces it;
- record (sections, quotes, claims), numformat, style, atomic, torch_loader, cli:
  what a section script runs through; ``pagekit.section`` gathers the names
  a script imports;
- registry (which pages and sections exist), inputs (what a section's
  numbers depend on), paths;
- executor (the one scheduler of every run, on concurrent.futures or Dask),
  run_sections (`make figures`), robustness_report, notebooks, bench;
- check_page, wording, check_citations, golden, write_golden: the checks
  of the prose against the printed numbers and the pinned binding.

Importing the package itself loads nothing.
"""
