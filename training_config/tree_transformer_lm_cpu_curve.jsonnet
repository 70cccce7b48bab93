// The Tree Transformer CPU config (`tree_transformer_lm_cpu.jsonnet`: same model, data,
// masking, optimiser and bfloat16 autocast where the CPU has it) trained for a 110-minute
// wall-clock budget, validated every 250 steps: its learning curve (perplexity and sentence
// F1 of the dev trees against steps), drawn by `benchmarks/tree_transformer_curve.py`.
//   TRAIN_PATHS  comma-separated, e.g. DATA/ptb-sample/trees/wsj_0001-0159,
//                DATA/ud/en_ewt/en_ewt-ud-train.conllu
//   DEV_PATH     e.g. DATA/ptb-sample/trees/wsj_0160-0179
local parsers = import 'parsers.libsonnet';

parsers.lm_training(
  std.extVar('TRAIN_PATHS'),
  std.extVar('DEV_PATH'),
  parsers.tree_transformer_lm(d_model=256, layers=6, heads=4, d_ff=1024, authors=true,
                              precision='auto'),
  batch_size=64,
  lr=5e-4,
  epochs=1000,
  minutes=110,
  batches_per_epoch=250,
)
