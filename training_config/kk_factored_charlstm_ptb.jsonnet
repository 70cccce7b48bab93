// Kitaev & Klein (2018), factored self-attentive parser with CharLSTM inputs (sec. 3-4, Table
// 3 "factored, CharLSTM"): word embeddings + bidirectional character LSTM, 8 partitioned
// self-attention layers (d_model 1024, 8 heads, d_kv 64, d_ff 2048), span MLP, CKY; one GPU.
//   PTB_TRAIN, PTB_DEV    treebank paths
local lal = import 'lal.libsonnet';
local embedder = lal.char_lstm_embedder(word_dim=100, char_dim=64, char_hidden=128);

lal.gpu_training(
  std.extVar('PTB_TRAIN'),
  std.extVar('PTB_DEV'),
  lal.char_reader(max_length=300),
  lal.parser(
    embedder,
    { type: 'partitioned_transformer' } + lal.partitioned_transformer(100 + 256, layers=8),
  ),
  batch_size=250,
  lr=8e-4,
)
