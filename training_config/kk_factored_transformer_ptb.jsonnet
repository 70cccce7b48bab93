// Kitaev & Klein (2018) factored self-attentive parser on top of a pretrained transformer
// (as in Kitaev, Cao & Klein 2019): transformer features (fine-tuned), 2 partitioned
// self-attention layers (d_model 1024, 8 heads, d_kv 64), span MLP, CKY; one GPU.
//   PTB_TRAIN, PTB_DEV    treebank paths
//   TRANSFORMER_MODEL     local directory of the transformer (hidden size 1024, e.g.
//                         bert-large-cased; change the 1024 below for another size)
local lal = import 'lal.libsonnet';
local model_name = std.extVar('TRANSFORMER_MODEL');

lal.gpu_training(
  std.extVar('PTB_TRAIN'),
  std.extVar('PTB_DEV'),
  lal.ptb_reader(model_name, max_length=300),
  lal.parser(
    lal.transformer_embedder(model_name),
    { type: 'partitioned_transformer' } + lal.partitioned_transformer(1024, layers=2),
  ),
  batch_size=32,
)
