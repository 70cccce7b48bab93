// Label attention parser, LAL paper's Chinese setting (Mrini et al. 2020, sec. 4):
// BERT-base-chinese features, 3 partitioned self-attention layers, one Label Attention Layer
// with 64 heads, d_kv = d_proj = 128, PFL on, RD off, span parser with CKY and hinge loss,
// learning rate 5e-5, batches of 100, one GPU. CTB 5.1 with the standard split by file id
// (train 001-270 and 440-1151, dev 301-325, test 271-300), read from the LDC release by the
// `lal_ctb` reader. Dev F1 is EVALB with COLLINS.prm, as CTB results are usually reported;
// `-o '{"model.evalb_preset": "ctb_punctuation"}'` deletes PU words instead.
//   CTB_DIR               the release's bracketed files, e.g. .../ctb5.1/data/bracketed
//                         (test: `allennlp evaluate MODEL "$CTB_DIR#test"`)
//   TRANSFORMER_MODEL     local directory of bert-base-chinese (hidden size 768)
local parsers = import 'parsers.libsonnet';
local model_name = std.extVar('TRANSFORMER_MODEL');
local ctb_dir = std.extVar('CTB_DIR');

parsers.gpu_training(
  ctb_dir + '#train',
  ctb_dir + '#dev',
  parsers.ptb_reader(model_name, max_length=300) + { type: 'lal_ctb' },
  parsers.span_parser(
    parsers.transformer_embedder(model_name),
    parsers.lal_stack(768, label_heads=64),
    span_loss='hinge',
  ),
)
