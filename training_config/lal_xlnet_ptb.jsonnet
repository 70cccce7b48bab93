// Label attention parser, LAL paper's best English setting (Mrini et al. 2020, sec. 3-4):
// XLNet-large-cased features, 3 partitioned self-attention layers (8 heads, d_kv 64, d_model
// 1024), one Label Attention Layer with 112 heads, d_kv = d_proj = 128, position-wise
// feed-forward layer on, residual dropout off, learning rate 5e-5, batches of 100 sentences,
// one GPU. The paper decodes with the joint span (HPSG) decoder, which is
// `lal_xlnet_ptb_joint.jsonnet`; this config trains the constituency span parser (CKY, hinge
// loss) on the same encoder.
//   PTB_TRAIN, PTB_DEV    treebank paths, e.g. /data/wsj/wsj_0200-2199 and wsj_2200-2299
//   TRANSFORMER_MODEL     local directory of xlnet-large-cased
local parsers = import 'parsers.libsonnet';
local model_name = std.extVar('TRANSFORMER_MODEL');

parsers.gpu_training(
  std.extVar('PTB_TRAIN'),
  std.extVar('PTB_DEV'),
  parsers.ptb_reader(model_name, max_length=300),
  parsers.span_parser(
    parsers.transformer_embedder(model_name),
    parsers.lal_stack(1024),
    span_loss='hinge',
  ),
)
