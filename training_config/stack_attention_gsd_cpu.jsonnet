// The stack-based multi-layer attention parser of `stack_attention_ewt_cpu.jsonnet` (the
// paper's model in the small CPU setting of `parsers.stack_attention_cpu`: 3 attention
// layers, the s and r stack vectors, UPOS input, PUNCT left out of UAS/LAS) on UD Chinese GSD,
// the stand-in for the paper's CTB: words are the treebank's segmented words.
//   ZH_TRAIN  e.g. DATA/ud/zh_gsd/zh_gsd-ud-train.conllu; with only the dev file at hand, a
//             sentence selection of it: DATA/ud/zh_gsd/zh_gsd-ud-dev.conllu[:350]
//   ZH_DEV    e.g. DATA/ud/zh_gsd/zh_gsd-ud-dev.conllu, or DATA/.../zh_gsd-ud-dev.conllu[350:400]
local parsers = import 'parsers.libsonnet';

parsers.stack_attention_cpu(std.extVar('ZH_TRAIN'), std.extVar('ZH_DEV'))
