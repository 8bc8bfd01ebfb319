"""The sizes of the page's models, for "Reproducing this page" (section 10):
trainable parameters of the MLP of sections 3 to 5 (plain and with batch
norm), the 12-layer Transformer of sections 7 and 8 (pre-norm and post-norm
with layer norm, pre-norm with RMS norm) and the 4-layer one of section 9
(with and without QK-norm), counted on the models the sections build, and
each count checked against its closed form.
"""

from __future__ import annotations


from pagekit.section import main

from normalisation_layers import language_data, mlp, norm_placement, qk_norm, transformer
from normalisation_layers.norms import BatchNorm, LayerNorm, RMSNorm


def count(model) -> int:
    return sum(p.numel() for p in model.parameters())


def mlp_closed_form(norm: bool) -> int:
    """Linear layers 32 -> 128, 7 x (128 -> 128), 128 -> 8, with biases; a
    norm adds a gain and a bias per hidden feature."""
    d, w, depth, c = mlp.DIM, mlp.WIDTH, mlp.DEPTH, mlp.CLASSES
    linear = (d * w + w) + (depth - 1) * (w * w + w) + (w * c + c)
    return linear + (2 * w * depth if norm else 0)


def transformer_closed_form(
    vocabulary: int, layers: int, dim: int, norm_size: int, place: str, qk_head: int = 0
) -> int:
    """Embedding and head (vocabulary x dim each), per block qkv (3 dim²),
    output projection (dim²), SwiGLU (3 x dim x hidden), two norms, optional
    QK-norm gains (two vectors of head width); a final norm in pre-norm."""
    hidden = int(8 * dim / 3)
    block = 4 * dim * dim + 3 * dim * hidden + 2 * norm_size + 2 * qk_head
    return 2 * vocabulary * dim + layers * block + (norm_size if place == transformer.PRE else 0)


def compute(section):
    q = section.quote
    vocabulary = language_data.load_corpus().vocab_size
    sizes = {
        "mlp_plain": (count(mlp.MLP()), mlp_closed_form(False)),
        "mlp_bn": (count(mlp.MLP(BatchNorm)), mlp_closed_form(True)),
    }
    d12, l12, h12 = norm_placement.DIM, norm_placement.LAYERS, norm_placement.HEADS
    for name, norm, size, place in (
        ("pre_layer", LayerNorm, 2 * d12, transformer.PRE),
        ("post_layer", LayerNorm, 2 * d12, transformer.POST),
        ("pre_rms", RMSNorm, d12, transformer.PRE),
    ):
        model = transformer.LanguageModel(vocabulary, d12, l12, h12, norm=norm, place=place)
        sizes[name] = (count(model), transformer_closed_form(vocabulary, l12, d12, size, place))
    d4, l4, h4 = qk_norm.DIM, qk_norm.LAYERS, qk_norm.HEADS
    for name, qk in (("qk_off", False), ("qk_on", True)):
        model = transformer.LanguageModel(vocabulary, d4, l4, h4, norm=RMSNorm, place=transformer.PRE, qk_norm=qk)
        sizes[name] = (
            count(model),
            transformer_closed_form(vocabulary, l4, d4, d4, transformer.PRE, d4 // h4 if qk else 0),
        )
    for name, (counted, closed) in sizes.items():
        section.agree(f"{name}: parameters counted and in closed form", counted, closed)
        q(f"params_{name}", counted, ",d")
    return {}


NO_FIGURES = "the section's sizes are prose"


def draw(section, results):
    """No figure: the sizes are prose."""


if __name__ == "__main__":
    main(__name__)
