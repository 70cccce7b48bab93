// Zhang et al. (2017), table 4, "- s vector": the attention does not see which words were
// pushed onto the stack; otherwise as stack_attention_ewt_cpu.jsonnet.
//   DEP_TRAIN  e.g. DATA/ud/en_ewt/en_ewt-ud-train.conllu
//   DEP_DEV    e.g. DATA/ud/en_ewt/en_ewt-ud-dev.conllu
local parsers = import 'parsers.libsonnet';

parsers.stack_attention_cpu(std.extVar('DEP_TRAIN'), std.extVar('DEP_DEV'), use_pushed=false)
