// Kitaev & Klein's (2018) factored parser over their base model's input (sec. 5, Table 3:
// word and POS tag embeddings), in the CPU setting of `kk_factored_minilm_cpu.jsonnet`: the
// same encoder, span parser and budget, only the input differs. Word and tag embeddings of 128,
// learned from scratch, concatenated and projected to the content half. The tags are the
// treebank's, in training and on dev (the paper tags dev and test with the Stanford tagger).
//   TRAIN_PATH, DEV_PATH  e.g. DATA/ptb-sample/trees/wsj_0001-0159 and wsj_0160-0179
local parsers = import 'parsers.libsonnet';

parsers.kk_words_cpu(std.extVar('TRAIN_PATH'), std.extVar('DEV_PATH'), pos_dim=128)
