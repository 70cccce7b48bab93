// Tree Transformer (Wang et al. 2019), unsupervised parsing in a small CPU setting: a masked
// language model over a 6-layer tree_transformer (d_model 256, 4 heads, d_ff 1024), trained
// on raw words for a 30-minute wall-clock budget on 2 CPU cores; trees of the dev treebank
// are induced from the link probabilities and scored (`sentence_f1`, `corpus_f1`). The
// paper's masking, vocabulary, Adam betas and clipping; the authors' code's encoder details
// (`authors=true`: scores / 256, the link scorer's own LayerNorm, zero prior diagonal), which
// gave far better trees than the paper's equations in this budget; a higher peak learning rate
// (5e-4, warm-up then decay) than the paper's constant 1e-4 for the short budget.
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
  epochs=200,
  minutes=30,
)
