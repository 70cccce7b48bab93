// Tree Transformer (Wang et al. 2019), the paper's unsupervised setting on one GPU: a masked
// language model over 10 tree_transformer layers (d_model 512, 8 heads, d_ff 2048, dropout
// 0.1), words masked with probability 1/7 (80/10/10), Adam lr 1e-4 with beta (0.9, 0.98),
// gradient norm clipped at 1.5, batches of 64 sentences, sentences over 70 words skipped,
// lowercased words with digits -> N, words seen once unknown; the encoder details of the
// authors' code (`authors=true`), with which the paper's numbers were made. 90 epochs of all of
// WSJ except sections 22-23 (about 43,000 sentences) are about the paper's 60,000 steps.
//   TRAIN_PATHS  comma-separated treebank paths, e.g. WSJ/00,WSJ/01,WSJ/02,...,WSJ/21,WSJ/24
//   DEV_PATH     e.g. WSJ/22
local parsers = import 'parsers.libsonnet';

parsers.lm_training(
  std.extVar('TRAIN_PATHS'),
  std.extVar('DEV_PATH'),
  parsers.tree_transformer_lm(authors=true),
  batch_size=64,
  lr=1e-4,
  epochs=90,
  cuda_device=0,
)
