// Stack-based multi-layer attention parser (Zhang et al. 2017), the paper's model in the small
// CPU setting of `parsers.stack_attention_cpu`, on Penn Treebank dependencies (fine POS tags,
// the PTB punctuation tags left out of UAS/LAS), e.g. the WSJ sample's Malt-TAB `.dp` files,
// which have no labels (every arc is labelled `_`, so LAS equals UAS).
//   DEP_TRAIN  e.g. DATA/ptb-sample/deps/wsj_0001-0159
//   DEP_DEV    e.g. DATA/ptb-sample/deps/wsj_0160-0179
local parsers = import 'parsers.libsonnet';

parsers.stack_attention_cpu(std.extVar('DEP_TRAIN'), std.extVar('DEP_DEV'), ud=false)
