// LAL paper ablation (Table 1, PFL no / RD yes) as the paper reports it, with F1, UAS and LAS:
// the best English setting with the joint span decoder (lal_xlnet_ptb_joint.jsonnet: XLNet-large,
// 3 partitioned self-attention layers, LAL of 112 heads, hinge loss, lambda = 0.5) with no
// position-wise feed-forward layer (the head contributions are exact) and residual dropout on
// (0.2).
//   PTB_TRAIN, PTB_DEV, PTB_DEPS, TRANSFORMER_MODEL as in lal_xlnet_ptb_joint.jsonnet
local parsers = import 'parsers.libsonnet';

parsers.lal_xlnet_joint(
  std.extVar('PTB_TRAIN'),
  std.extVar('PTB_DEV'),
  std.extVar('TRANSFORMER_MODEL'),
  std.extVar('PTB_DEPS'),
  pfl=false, rd=true,
)
