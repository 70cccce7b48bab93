// Span parser, small CPU Chinese setting: Kitaev & Klein (2018, sec. 5, "CharLSTM" inputs)
// with a BiLSTM encoder instead of their self-attention: word embeddings + a character BiLSTM
// per word -> one BiLSTM layer -> fencepost span features -> label MLP -> CKY, hinge loss, POS
// tagging head. No pretrained model (MiniLM-L6 is English-only). Sized for the Sinica Treebank
// sample (Traditional Chinese, Academia Sinica labels; not CTB) on 2 CPU cores.
//   SINICA_TREES  e.g. DATA/sinica/sinica-train-dev.trees (one tree per line); the
//                 first 8,000 trees train (`[:8000]`), the other 1,000 are dev (`[8000:]`),
//                 see the tree selection of the `lal_ptb` reader.
local parsers = import 'parsers.libsonnet';
local trees = std.extVar('SINICA_TREES');
local word_dim = 100;
local char_hidden = 50;

{
  dataset_reader: parsers.char_reader(),
  train_data_path: trees + '[:8000]',
  validation_data_path: trees + '[8000:]',
  // Words seen once in training become @@UNKNOWN@@, so that the unknown-word embedding is
  // trained; the CharLSTM still sees their characters.
  vocabulary: { min_count: { tokens: 2 } },
  model: parsers.span_parser(
    parsers.char_lstm_embedder(word_dim=word_dim, char_dim=32, char_hidden=char_hidden),
    {
      type: 'lstm',
      input_size: word_dim + 2 * char_hidden,
      hidden_size: 150,
      num_layers: 1,
      bidirectional: true,
    },
    span_hidden_dim=250,
    dropout=0.3,
    span_loss='hinge',
  ),
  data_loader: {
    batch_sampler: { type: 'bucket', batch_size: 64, sorting_keys: ['tokens'] },
  },
  validation_data_loader: {
    batch_sampler: { type: 'bucket', batch_size: 128, sorting_keys: ['tokens'] },
  },
  trainer: {
    num_epochs: 10,
    optimizer: { type: 'adam', lr: 2e-3 },
    grad_norm: 5.0,
    validation_metric: '+evalb_f1',
    cuda_device: -1,
  },
}
