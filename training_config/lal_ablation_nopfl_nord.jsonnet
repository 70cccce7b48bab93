// LAL paper ablation (Table 1, PFL no / RD no (the interpretable model)): the best English setting of
// lal_xlnet_ptb.jsonnet with the position-wise feed-forward layer off and residual dropout off.
//   PTB_TRAIN, PTB_DEV, TRANSFORMER_MODEL as in lal_xlnet_ptb.jsonnet
local lal = import 'lal.libsonnet';
local model_name = std.extVar('TRANSFORMER_MODEL');

lal.gpu_training(
  std.extVar('PTB_TRAIN'),
  std.extVar('PTB_DEV'),
  lal.ptb_reader(model_name, max_length=300),
  lal.parser(lal.transformer_embedder(model_name), lal.lal_stack(1024, pfl=false, rd=false)),
)
