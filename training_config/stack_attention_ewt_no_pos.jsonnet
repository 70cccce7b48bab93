// Zhang et al. (2017), table 4, "- POS": words only, no POS embeddings (the tags are still read,
// to leave punctuation out of UAS/LAS); otherwise as stack_attention_ewt_cpu.jsonnet. Needs no
// tags at prediction, so it parses raw text (`lal-parse MODEL --format conllu`).
//   DEP_TRAIN  e.g. DATA/ud/en_ewt/en_ewt-ud-train.conllu
//   DEP_DEV    e.g. DATA/ud/en_ewt/en_ewt-ud-dev.conllu
local parsers = import 'parsers.libsonnet';

parsers.stack_attention_cpu(std.extVar('DEP_TRAIN'), std.extVar('DEP_DEV'), pos_dim=0)
