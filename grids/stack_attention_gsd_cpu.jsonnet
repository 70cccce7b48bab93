// The stack-attention parser on UD Chinese GSD (stack_attention_gsd_cpu.jsonnet; the paper's
// Chinese treebank, CTB 5, is not here), beside the graph-based baseline of the same inputs,
// encoder and budget (biaffine_gsd_cpu.jsonnet); checkpoints chosen on ZH_DEV, the table on
// ZH_TEST. With only the GSD dev file at hand (500 sentences): ZH_TRAIN = FILE[:350],
// ZH_DEV = FILE[350:400], ZH_TEST = FILE[400:] (sentence selections of the file).
{
  name: 'stack_attention_gsd_cpu',
  budget_minutes: 2,
  seeds: [1, 2, 3],
  evaluate: { test: std.extVar('ZH_TEST') },
  metrics: ['UAS', 'LAS'],
  reference_variant: 'stack attention',
  reference_source: 'Zhang et al. 2017, CTB 5 test (not GSD), single model',
  variants: [
    { name: 'stack attention', config: '../training_config/stack_attention_gsd_cpu.jsonnet',
      reference: { UAS: 87.41, LAS: 85.40 } },
    { name: 'biaffine (Dozat & Manning)', config: '../training_config/biaffine_gsd_cpu.jsonnet' },
  ],
}
