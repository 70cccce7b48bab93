// Kitaev & Klein's (2018) factored self-attentive encoder with the joint span (HPSG) decoder, in
// the setting of `lal_xlnet_ptb_joint.jsonnet`: the LAL paper's comparison of self-attention
// layers without a Label Attention Layer, with F1, UAS and LAS. Transformer features
// (fine-tuned), 2 partitioned self-attention layers (d_model 1024, 8 heads, d_kv 64), joint span
// labels, biaffine arcs and dependency labels, lambda = 0.5, hinge span loss; one GPU.
//   PTB_TRAIN, PTB_DEV, PTB_DEPS, TRANSFORMER_MODEL as in lal_xlnet_ptb_joint.jsonnet
//                         (hidden size 1024, e.g. xlnet-large-cased; change the 1024 below for
//                         another size)
local parsers = import 'parsers.libsonnet';
local model_name = std.extVar('TRANSFORMER_MODEL');
local deps = std.extVar('PTB_DEPS');

parsers.gpu_training(
  std.extVar('PTB_TRAIN'),
  std.extVar('PTB_DEV'),
  parsers.ptb_reader(model_name, max_length=300, dependencies_dir=deps),
  parsers.joint_parser(
    parsers.transformer_embedder(model_name),
    parsers.partitioned_transformer(1024, layers=2),
    span_loss='hinge',
  ),
) + { validation_dataset_reader: parsers.ptb_reader(model_name, dependencies_dir=deps) }
