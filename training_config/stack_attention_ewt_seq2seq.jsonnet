// Zhang et al. (2017), the plain seq2seq baseline: one attention layer and neither stack vector
// (Bahdanau attention over the words; transitions still restricted to legal ones), otherwise
// as stack_attention_ewt_cpu.jsonnet.
//   DEP_TRAIN  e.g. DATA/ud/en_ewt/en_ewt-ud-train.conllu
//   DEP_DEV    e.g. DATA/ud/en_ewt/en_ewt-ud-dev.conllu
local parsers = import 'parsers.libsonnet';

parsers.stack_attention_cpu(std.extVar('DEP_TRAIN'), std.extVar('DEP_DEV'), attention_layers=1, use_pushed=false, use_popped=false)
