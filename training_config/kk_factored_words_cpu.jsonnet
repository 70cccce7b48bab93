// Kitaev & Klein's (2018) factored parser over word embeddings alone (sec. 5, Table 3: no POS
// tags, no characters), in the CPU setting of `kk_factored_minilm_cpu.jsonnet`: the same
// encoder, span parser and budget, only the input differs. Word embeddings of 128, learned from
// scratch.
//   TRAIN_PATH, DEV_PATH  e.g. DATA/ptb-sample/trees/wsj_0001-0159 and wsj_0160-0179
local parsers = import 'parsers.libsonnet';

parsers.kk_words_cpu(std.extVar('TRAIN_PATH'), std.extVar('DEV_PATH'))
