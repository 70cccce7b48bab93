// LAL paper ablation (Table 2, QV no / Conc. yes): the best English setting of
// lal_xlnet_ptb.jsonnet with a query matrix as in self-attention instead of query vectors, heads concatenated.
//   PTB_TRAIN, PTB_DEV, TRANSFORMER_MODEL as in lal_xlnet_ptb.jsonnet
local lal = import 'lal.libsonnet';
local model_name = std.extVar('TRANSFORMER_MODEL');

lal.gpu_training(
  std.extVar('PTB_TRAIN'),
  std.extVar('PTB_DEV'),
  lal.ptb_reader(model_name, max_length=300),
  lal.parser(lal.transformer_embedder(model_name), lal.lal_stack(1024, qv=false, conc=true)),
)
