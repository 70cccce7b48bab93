// Stack-based multi-layer attention parser (Zhang et al. 2017), the paper's model (3 attention
// layers, the s and r stack vectors, POS input) in the small CPU setting of
// `parsers.stack_attention_cpu`, on a UD treebank (UPOS tags, PUNCT left out of UAS/LAS).
//   DEP_TRAIN  e.g. DATA/ud/en_ewt/en_ewt-ud-train.conllu
//   DEP_DEV    e.g. DATA/ud/en_ewt/en_ewt-ud-dev.conllu
local parsers = import 'parsers.libsonnet';

parsers.stack_attention_cpu(std.extVar('DEP_TRAIN'), std.extVar('DEP_DEV'))
