// Kitaev & Klein (2018) factored self-attentive parser on a pretrained transformer (as in
// Kitaev, Cao & Klein 2019): transformer features (fine-tuned), 2 partitioned self-attention
// layers (d_model 1024, 8 heads, d_kv 64), span MLP, CKY, hinge loss; one GPU.
//   PTB_TRAIN, PTB_DEV    treebank paths, e.g. /data/wsj/wsj_0200-2199 and wsj_2200-2299
//   TRANSFORMER_MODEL     local directory of the transformer (hidden size 1024, e.g.
//                         bert-large-cased; change the 1024 below for another size)
local parsers = import 'parsers.libsonnet';
local model_name = std.extVar('TRANSFORMER_MODEL');

parsers.gpu_training(
  std.extVar('PTB_TRAIN'),
  std.extVar('PTB_DEV'),
  parsers.ptb_reader(model_name, max_length=300),
  parsers.span_parser(
    parsers.transformer_embedder(model_name),
    parsers.partitioned_transformer(1024, layers=2),
    span_loss='hinge',
  ),
  batch_size=32,
)
