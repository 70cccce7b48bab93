// LAL paper ablation (Table 2, QV no / Conc. yes) as the paper reports it, with F1, UAS and LAS:
// the best English setting with the joint span decoder (lal_xlnet_ptb_joint.jsonnet: XLNet-large,
// 3 partitioned self-attention layers, LAL of 112 heads, hinge loss, lambda = 0.5) with a query
// matrix as in self-attention in place of the query vectors, heads concatenated.
//   PTB_TRAIN, PTB_DEV, PTB_DEPS, TRANSFORMER_MODEL as in lal_xlnet_ptb_joint.jsonnet
local parsers = import 'parsers.libsonnet';

parsers.lal_xlnet_joint(
  std.extVar('PTB_TRAIN'),
  std.extVar('PTB_DEV'),
  std.extVar('TRANSFORMER_MODEL'),
  std.extVar('PTB_DEPS'),
  qv=false, conc=true,
)
