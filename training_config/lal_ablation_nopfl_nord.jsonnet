// LAL paper ablation (Table 1, PFL no / RD no, the interpretable model): the best English setting
// of lal_xlnet_ptb.jsonnet (label attention parser, span parser with CKY, hinge loss) with the
// position-wise feed-forward layer off and residual dropout off.
//   PTB_TRAIN, PTB_DEV, TRANSFORMER_MODEL as in lal_xlnet_ptb.jsonnet
local parsers = import 'parsers.libsonnet';
local model_name = std.extVar('TRANSFORMER_MODEL');

parsers.gpu_training(
  std.extVar('PTB_TRAIN'),
  std.extVar('PTB_DEV'),
  parsers.ptb_reader(model_name, max_length=300),
  parsers.span_parser(
    parsers.transformer_embedder(model_name),
    parsers.lal_stack(1024, pfl=false, rd=false),
    span_loss='hinge',
  ),
)
