// Graph-based baseline for the stack attention parser: allennlp-models' biaffine_parser
// (Dozat & Manning 2017) with the inputs, encoder size, optimiser and budget of
// stack_attention_ewt_cpu.jsonnet, on a UD treebank (UPOS tags). Its own UAS/LAS also leave out
// SYM; benchmarks/dependency_side_by_side.py scores both parsers with PUNCT alone left out.
//   DEP_TRAIN  e.g. DATA/ud/en_ewt/en_ewt-ud-train.conllu
//   DEP_DEV    e.g. DATA/ud/en_ewt/en_ewt-ud-dev.conllu
local parsers = import 'parsers.libsonnet';

parsers.biaffine_cpu(std.extVar('DEP_TRAIN'), std.extVar('DEP_DEV'))
