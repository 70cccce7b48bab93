// The graph-based baseline of `stack_attention_gsd_cpu.jsonnet` (allennlp-models'
// `biaffine_parser`, as `biaffine_ewt_cpu.jsonnet`) on UD Chinese GSD.
//   ZH_TRAIN, ZH_DEV  see stack_attention_gsd_cpu.jsonnet
local parsers = import 'parsers.libsonnet';

parsers.biaffine_cpu(std.extVar('ZH_TRAIN'), std.extVar('ZH_DEV'))
