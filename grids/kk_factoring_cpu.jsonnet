// Kitaev & Klein 2018, sec. 3 (factoring content and position) at CPU scale: the unfactored
// encoder (content and position summed, dense layers), the encoder factored only at the input
// ([content ; position], dense layers) and the factored encoder (block-diagonal layers), the
// `partitioned` and `partition_input` arguments of `partitioned_transformer`.
local kk = import 'kk_cpu.libsonnet';
kk {
  name: 'kk_factoring_cpu',
  reference_variant: 'factored',
  reference_source: 'Kitaev & Klein 2018, PTB dev (WSJ 22), no pretraining',
  variants: [
    { name: 'unfactored',
      overrides: { model: { encoder: { '+partitioned': false } } },
      reference: { F1: 92.67 } },
    { name: 'factored at the input',
      overrides: { model: { encoder: { '+partitioned': false, '+partition_input': true } } },
      reference: { F1: 92.60 } },
    { name: 'factored', reference: { F1: 93.15 } },
  ],
}
