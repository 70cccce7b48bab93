// Small CPU setting of the joint span parser (Zhou & Zhao 2019, the decoder of the LAL paper):
// MiniLM-L6 (all-MiniLM-L6-v2, fine-tuned) -> one BiLSTM layer -> fencepost span features ->
// joint span label scores (with <H>) + biaffine arcs and dependency labels -> the exact joint
// span decoder with lambda = 0.5. Meant for the PTB WSJ sample on 2 CPU cores.
//
//   TRAIN_PATH  e.g. ../shared/data/ptb-sample/trees/wsj_0001-0159 (dir + WSJ file-id range)
//   DEV_PATH    e.g. ../shared/data/ptb-sample/trees/wsj_0160-0179
//   DEPS_DIR    folder of dependency files named like the tree files (wsj_0001.dp, CoNLL-X/U
//               or Malt-TAB), e.g. ../shared/data/ptb-sample/deps
//   MINILM_DIR  directory of the MiniLM model (`make minilm-dir` prints it)
local lib = import 'span_parser.libsonnet';
local model_name = std.extVar('MINILM_DIR');
local deps = std.extVar('DEPS_DIR');

{
  dataset_reader: lib.ptb_reader(model_name, max_length=100, dependencies_dir=deps),
  validation_dataset_reader: lib.ptb_reader(model_name, dependencies_dir=deps),
  train_data_path: std.extVar('TRAIN_PATH'),
  validation_data_path: std.extVar('DEV_PATH'),
  model: lib.joint_parser(
    model_name,
    encoder={ type: 'lstm', input_size: 384, hidden_size: 200, bidirectional: true },
    span_hidden_dim=250,
    dropout=0.2,
    span_weight=0.5,
    label_dim=64,
  ),
  data_loader: {
    batch_sampler: { type: 'bucket', batch_size: 32, sorting_keys: ['tokens'] },
  },
  validation_data_loader: {
    batch_sampler: { type: 'bucket', batch_size: 64, sorting_keys: ['tokens'] },
  },
  trainer: {
    num_epochs: 4,
    optimizer: lib.optimizer(lr=1e-3, transformer_lr=5e-5),
    learning_rate_scheduler: { type: 'slanted_triangular', cut_frac: 0.06 },
    grad_norm: 5.0,
    validation_metric: '+evalb_f1',
    cuda_device: -1,
  },
}
