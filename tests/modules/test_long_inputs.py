"""Sentences longer than a model's learned positions, encoded in overlapping windows: the
window plan against brute force, the transformer embedder's word piece half
(`WordPieceTransformer`: AllenNLP's output within the limit, stitched by the central-part rule
beyond it, on the real MiniLM) and the partitioned transformer's windows. (The joint span
decoder's memory guard for long sentences is tested in `tests/decoding/test_memory.py`.)"""
import itertools
from types import SimpleNamespace

import pytest
import torch
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder
from transformers import RobertaConfig, RobertaModel, XLNetConfig

from lal_allennlp.modules import LabelAttentionStack, PartitionedTransformerEncoder
from lal_allennlp.modules.label_attention import LabelAttentionLayer
from lal_allennlp.modules.overlapping_windows import choose_windows, plan_windows, window_starts
from lal_allennlp.modules.transformer_embedder import WordPieceTransformer
from lal_allennlp.modules.word_piece_limit import transformer_position_limit
from tests.conftest import minilm_dir

# AllenNLP's own forward, which the windows call on each batch of windows.
original_forward = PretrainedTransformerEmbedder.forward

CLS, SEP, PAD = 101, 102, 0


def brute_force_choice(content_length, window, starts):
    """Per position, the window farthest from a cut (an edge inside the sequence), the first
    such window on ties, by enumerating every window that holds the position."""
    chosen = []
    for p in range(content_length):
        best, best_distance = None, None
        for w, start in enumerate(starts):
            end = min(start + window, content_length)
            if not start <= p < end:
                continue
            cuts = [p - start] if start > 0 else []
            cuts += [end - 1 - p] if end < content_length else []
            distance = min(cuts, default=float("inf"))
            if best is None or distance > best_distance:
                best, best_distance = w, distance
        chosen.append(best)
    return chosen


@pytest.mark.parametrize(
    "content_length,window", list(itertools.product(range(0, 40), [1, 2, 3, 7, 10]))
)
def test_windows_cover_the_content_and_choose_the_central_part(content_length, window):
    starts = window_starts(content_length, window)
    assert starts[0] == 0 and starts == sorted(set(starts))
    assert min(starts[-1] + window, content_length) == content_length  # the last ends at the end
    assert all(b - a <= max(1, window // 2) for a, b in zip(starts, starts[1:]))  # half overlap
    chosen = choose_windows(content_length, window, starts).tolist()
    assert chosen == brute_force_choice(content_length, window, starts)
    # Every position keeps about a quarter of a window between itself and a cut.
    for p, w in enumerate(chosen):
        start, end = starts[w], min(starts[w] + window, content_length)
        if start > 0:
            assert p - start >= (window - max(1, window // 2) - 1) // 2
        if end < content_length:
            assert end - 1 - p >= (window - max(1, window // 2) - 1) // 2


def test_window_starts_by_hand():
    assert window_starts(38, 10) == [0, 5, 10, 15, 20, 25, 28]
    assert window_starts(10, 10) == [0]
    assert window_starts(600 - 2, 510) == [0, 88]
    # Windows [0, 10) and [5, 15): position 7 is 2 from either cut (the first window wins the
    # tie), position 8 is 1 from the first window's cut and 3 from the second's.
    assert choose_windows(15, 10, [0, 5]).tolist() == [0] * 8 + [1] * 7


def test_plan_folds_and_unfolds_a_mixed_batch():
    # Row 0: [S] 0..8 [E] (9 content positions, windows of 5: starts 0, 2, 4); row 1 fits.
    mask = torch.tensor([[True] * 11, [True] * 4 + [False] * 7])
    plan = plan_windows(mask, window_length=7, num_start=1, num_end=1)
    positions = torch.arange(22).view(2, 11)
    assert plan.fold(positions).tolist() == [
        [0, 1, 2, 3, 4, 5, 10],
        [0, 3, 4, 5, 6, 7, 10],
        [0, 5, 6, 7, 8, 9, 10],
        [11, 12, 13, 14, 0, 0, 0],  # window padding: any index, masked
    ]
    assert plan.window_mask.sum(dim=1).tolist() == [7, 7, 7, 4]
    # Each position's vector names the window and window position it comes from.
    windows = torch.tensor([[[w * 10 + p] for p in range(7)] for w in range(4)], dtype=torch.float)
    unfolded = plan.unfold(windows).squeeze(-1)
    # Windows [0, 5), [2, 7), [4, 9) of the content. Content 3 is 1 from window 0's cut and 1
    # from window 1's (the first wins), 4 is 2 from window 1's cuts, 5 is 1 from window 1's and
    # window 2's cut; [S] comes from window 0, [E] from window 2.
    assert unfolded[0].tolist() == [0, 1, 2, 3, 4, 13, 14, 23, 24, 25, 26]
    assert unfolded[1].tolist() == [30, 31, 32, 33] + [0] * 7


def test_plan_needs_padding_after_the_real_positions():
    with pytest.raises(ValueError, match="before its padding"):
        plan_windows(torch.tensor([[True, False, True]]), 2, 1, 1)


@pytest.fixture(scope="module")
def embedders():
    """MiniLM's first layer, with the last layer's vectors and with a scalar mix of layers."""
    torch.manual_seed(0)
    built = {
        last: WordPieceTransformer(
            minilm_dir(), last_layer_only=last, transformer_kwargs={"num_hidden_layers": 2}
        ).eval()
        for last in (True, False)
    }
    # A scalar mix far from uniform, so that a wrong layer order would show.
    built[False]._scalar_mix.scalar_parameters[0].data.fill_(2.0)
    return built


def word_pieces(lengths, seed=0):
    """Rows of `[CLS] pieces [SEP]` of the given lengths (special tokens included), padded."""
    generator = torch.Generator().manual_seed(seed)
    width = max(lengths)
    ids = torch.full((len(lengths), width), PAD)
    mask = torch.zeros(len(lengths), width, dtype=torch.bool)
    for b, length in enumerate(lengths):
        ids[b, 1 : length - 1] = torch.randint(1000, 20000, (length - 2,), generator=generator)
        ids[b, 0], ids[b, length - 1] = CLS, SEP
        mask[b, :length] = True
    return ids, mask


def test_minilm_reads_512_word_pieces(embedders):
    assert transformer_position_limit(embedders[True]) == 512
    ids, _ = word_pieces([513, 9])
    assert embedders[True].window_limit(ids) == 512
    assert embedders[True].window_limit(ids[:, :512]) is None


def test_position_limits_of_other_transformers():
    # RoBERTa's positions start after its padding index: 514 rows, 512 positions.
    roberta = RobertaConfig(
        vocab_size=20, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=8, max_position_embeddings=514, pad_token_id=1,
    )
    embedder = SimpleNamespace(config=roberta, transformer_model=RobertaModel(roberta))
    assert transformer_position_limit(embedder) == 512
    # XLNet has relative positions and no limit.
    assert transformer_position_limit(SimpleNamespace(config=XLNetConfig())) is None


@pytest.mark.parametrize("last_layer_only", [True, False])
@pytest.mark.parametrize("with_type_ids", [False, True])
def test_within_the_limit_the_output_is_the_original_bit_for_bit(
    embedders, last_layer_only, with_type_ids
):
    embedder = embedders[last_layer_only]
    # Padding included: a windowed encoding would be zero there and differ.
    for lengths in ([512, 40], [300, 7, 120]):
        ids, mask = word_pieces(lengths)
        type_ids = (torch.arange(ids.size(1)) >= 3).long().expand_as(ids) if with_type_ids else None
        # With gradients on (as in training) nothing is packed: the unpacked path alone.
        ours = embedder(ids, mask, type_ids=type_ids)
        original = original_forward(embedder, ids, mask, type_ids=type_ids)
        assert torch.equal(ours, original)


@pytest.mark.parametrize("last_layer_only", [True, False])
@pytest.mark.parametrize("with_type_ids", [False, True])
def test_long_rows_are_stitched_from_explicit_windows(embedders, last_layer_only, with_type_ids):
    embedder = embedders[last_layer_only]
    # Row 0: [CLS] + 38 pieces + [SEP]; windows of 12 word pieces hold 10 of them, starting at
    # pieces 0, 5, 10, 15, 20, 25 and 28. Row 1 fits in one window.
    ids, mask = word_pieces([40, 9])
    type_ids = torch.ones_like(ids) if with_type_ids else None
    starts = [0, 5, 10, 15, 20, 25, 28]
    pieces = ids[0, 1:39]
    windows = [torch.cat([ids[0, :1], pieces[s : s + 10], ids[0, 39:40]]) for s in starts]
    windows.append(torch.cat([ids[1, :9], torch.full((3,), PAD)]))
    window_ids = torch.stack(windows)
    window_mask = torch.ones_like(window_ids, dtype=torch.bool)
    window_mask[-1, 9:] = False
    window_types = torch.ones_like(window_ids) if with_type_ids else None
    with torch.no_grad():
        outputs = original_forward(embedder, window_ids, window_mask, type_ids=window_types)
        stitched = embedder.embed_in_windows(ids, mask, type_ids, window_length=12)
        alone_types = None if type_ids is None else type_ids[1:, :9]
        alone = original_forward(embedder, ids[1:, :9], mask[1:, :9], type_ids=alone_types)

    expected = torch.zeros_like(stitched)
    expected[0, 0] = outputs[0, 0]  # [CLS] from the first window
    expected[0, 39] = outputs[6, 11]  # [SEP] from the last
    for piece, w in enumerate(brute_force_choice(38, 10, starts)):
        expected[0, 1 + piece] = outputs[w, 1 + piece - starts[w]]
    expected[1, :9] = outputs[7, :9]
    assert torch.equal(stitched, expected)
    # The short row is its own window: the same vectors as alone, up to the batch's rounding.
    torch.testing.assert_close(stitched[1, :9], alone[0], atol=1e-5, rtol=1e-5)
    # A piece deep inside a window differs from the same piece encoded without context.
    assert not torch.allclose(stitched[0, 20], outputs[0, 0], atol=1e-3)


def test_long_batches_take_the_window_path_and_keep_gradients(embedders):
    embedder = embedders[True]
    ids, mask = word_pieces([700, 30])
    embedder.train()
    try:
        output = embedder(ids, mask)
    finally:
        embedder.eval()
    assert output.shape == (2, 700, 384)
    assert torch.all(output[1, 30:] == 0)
    output[0].sum().backward()
    gradient = embedder.transformer_model.embeddings.word_embeddings.weight.grad
    assert gradient is not None and gradient.abs().sum() > 0
    embedder.zero_grad()


def small_encoder(**overrides) -> PartitionedTransformerEncoder:
    torch.manual_seed(0)
    arguments = dict(input_dim=6, d_model=8, num_layers=2, num_heads=2, d_kv=4, d_ff=8, max_len=10)
    return PartitionedTransformerEncoder(**{**arguments, **overrides}).eval()


def test_partitioned_transformer_encodes_longer_inputs_in_windows():
    encoder = small_encoder()
    # Row 0: START + 20 words + STOP (22 > max_len 10 positions): windows of 8 words starting at
    # words 0, 4, 8 and 12. Row 1: START + 3 words + STOP.
    generator = torch.Generator().manual_seed(1)
    inputs = torch.randn(2, 22, 6, generator=generator)
    mask = torch.zeros(2, 22, dtype=torch.bool)
    mask[0], mask[1, :5] = True, True
    starts = [0, 4, 8, 12]
    windows = [
        torch.cat([inputs[0, :1], inputs[0, 1 + s : 9 + s], inputs[0, 21:22]]) for s in starts
    ]
    windows.append(torch.cat([inputs[1, :5], torch.zeros(5, 6)]))
    window_mask = torch.ones(5, 10, dtype=torch.bool)
    window_mask[4, 5:] = False
    with torch.no_grad():
        outputs = encoder(torch.stack(windows), window_mask)
        alone = encoder(inputs[1:, :5], mask[1:, :5])
        encoded = encoder(inputs, mask)
    assert encoder.get_attention_weights() == [None, None]

    expected = torch.zeros_like(encoded)
    expected[0, 0], expected[0, 21] = outputs[0, 0], outputs[3, 9]  # START, STOP
    for word, w in enumerate(brute_force_choice(20, 8, starts)):
        expected[0, 1 + word] = outputs[w, 1 + word - starts[w]]
    expected[1, :5] = outputs[4, :5]
    assert torch.equal(encoded, expected)
    torch.testing.assert_close(encoded[1, :5], alone[0], atol=1e-5, rtol=1e-5)


def test_lal_stack_without_self_attention_layers_reads_past_max_len():
    # The CPU LAL config's encoder: learned positions, no self-attention layer, label attention.
    self_attention = small_encoder(num_layers=0)
    label_attention = LabelAttentionLayer(input_dim=8, num_heads=3, d_kv=4, d_proj=2, d_ff=8)
    stack = LabelAttentionStack(self_attention, label_attention).eval()
    inputs = torch.randn(1, 25, 6)
    mask = torch.ones(1, 25, dtype=torch.bool)
    with torch.no_grad():
        output = stack(inputs, mask)
        positions = self_attention(inputs, mask)
        # 23 words in windows of 8 starting at words 0, 4, 8, 12 and 15: word 10 (position 11)
        # is 2 words from window 2's cut, 1 from window 1's, so it sits at position 3 of
        # window 2 (START, words 8, 9, 10).
        by_hand = self_attention.input_norm(
            torch.cat([self_attention.content_projection(inputs[0, 11]),
                       self_attention.position_embeddings[3]])
        )
    assert output.shape == (1, 25, 6)
    torch.testing.assert_close(positions[0, 11], by_hand)
    # The label attention reads the whole sentence at once.
    assert label_attention.last_attention.shape == (1, 3, 25)
    torch.testing.assert_close(label_attention.last_attention.sum(-1), torch.ones(1, 3))
