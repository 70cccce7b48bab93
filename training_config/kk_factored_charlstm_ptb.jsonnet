// Kitaev & Klein (2018), factored self-attentive parser with CharLSTM inputs (sec. 3-4, Table
// 3 "factored, CharLSTM"): word embeddings + bidirectional character LSTM, 8 partitioned
// self-attention layers (d_model 1024, 8 heads, d_kv 64, d_ff 2048), span MLP, CKY, hinge
// loss; one GPU.
//   PTB_TRAIN, PTB_DEV    treebank paths, e.g. /data/wsj/wsj_0200-2199 and wsj_2200-2299
local parsers = import 'parsers.libsonnet';
local embedder = parsers.char_lstm_embedder(word_dim=100, char_dim=64, char_hidden=128);

parsers.gpu_training(
  std.extVar('PTB_TRAIN'),
  std.extVar('PTB_DEV'),
  parsers.char_reader(max_length=300),
  parsers.span_parser(
    embedder,
    parsers.partitioned_transformer(100 + 256, layers=8),
    span_loss='hinge',
  ),
  batch_size=250,
  lr=8e-4,
)
