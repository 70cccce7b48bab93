// Label attention parser as published (Mrini et al. 2020, sec. 3-4), best English setting with
// its decoder, the joint span (HPSG) parser of Zhou & Zhao (2019): XLNet-large-cased features,
// 3 partitioned self-attention layers (8 heads, d_kv 64, d_model 1024), one Label Attention
// Layer with 112 heads, d_kv = d_proj = 128, PFL on, RD off; span scores and biaffine
// dependency scores decoded together with lambda = 0.5; learning rate 5e-5, batches of 100
// sentences, one GPU. The published numbers use Stanford basic dependencies (PTB-SD 3.3.0),
// converted from the trees with the user's own tools. The `lal_ablation_*` configs are this
// model with the switches of the paper's Tables 1 and 2.
//   PTB_TRAIN, PTB_DEV    treebank paths, e.g. /data/wsj/wsj_0200-2199 and wsj_2200-2299
//   PTB_DEPS              folder of dependency files named like the tree files
//                         (wsj_0200.conllx, ...; CoNLL-X, CoNLL-U or Malt-TAB)
//   TRANSFORMER_MODEL     local directory of xlnet-large-cased
local parsers = import 'parsers.libsonnet';

parsers.lal_xlnet_joint(
  std.extVar('PTB_TRAIN'),
  std.extVar('PTB_DEV'),
  std.extVar('TRANSFORMER_MODEL'),
  std.extVar('PTB_DEPS'),
)
