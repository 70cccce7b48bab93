// Joint span parser (Zhou & Zhao 2019, the decoder of the LAL paper), small CPU setting:
// MiniLM-L6 (all-MiniLM-L6-v2, fine-tuned) -> one BiLSTM layer -> fencepost span features ->
// joint span label scores (with <H>) + biaffine arcs and dependency labels -> the exact joint
// span decoder with lambda = 0.5. Sized for the PTB WSJ sample on 2 CPU cores.
//   TRAIN_PATH  e.g. DATA/ptb-sample/trees/wsj_0001-0159 (dir + WSJ file-id range)
//   DEV_PATH    e.g. DATA/ptb-sample/trees/wsj_0160-0179
//   DEPS_DIR    folder of dependency files named like the tree files (wsj_0001.dp, CoNLL-X/U
//               or Malt-TAB), e.g. DATA/ptb-sample/deps
//   MINILM_DIR  directory of the MiniLM model (`make minilm-dir` prints it)
local parsers = import 'parsers.libsonnet';
local model_name = std.extVar('MINILM_DIR');
local deps = std.extVar('DEPS_DIR');

parsers.cpu_training(
  std.extVar('TRAIN_PATH'),
  std.extVar('DEV_PATH'),
  parsers.ptb_reader(model_name, max_length=100, dependencies_dir=deps),
  parsers.ptb_reader(model_name, dependencies_dir=deps),
  parsers.joint_parser(
    parsers.transformer_embedder(model_name),
    { type: 'lstm', input_size: 384, hidden_size: 200, bidirectional: true },
    span_hidden_dim=250,
    dropout=0.2,
    span_weight=0.5,
    arc_dim=256,
    label_dim=64,
  ),
  batch_size=32,
  epochs=4,
  lr=1e-3,
  transformer_lr=5e-5,
)
