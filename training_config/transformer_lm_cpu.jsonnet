// The perplexity baseline of `tree_transformer_lm_cpu.jsonnet`: the same masked language model,
// data, optimiser and 30-minute budget over a plain 6-layer Transformer (AllenNLP's
// `pytorch_transformer`, d_model 256, 4 heads, d_ff 1024, sinusoidal positions) instead of the
// Tree Transformer; it gives perplexity and masked accuracy, no trees.
//   TRAIN_PATHS  comma-separated, as for tree_transformer_lm_cpu.jsonnet
//   DEV_PATH     e.g. DATA/ptb-sample/trees/wsj_0160-0179
local parsers = import 'parsers.libsonnet';

parsers.lm_training(
  std.extVar('TRAIN_PATHS'),
  std.extVar('DEV_PATH'),
  parsers.transformer_lm(d_model=256, layers=6, heads=4, d_ff=1024, precision='auto'),
  batch_size=64,
  lr=5e-4,
  epochs=200,
  minutes=30,
)
