// Zhang et al. (2017)'s ensemble of 4 on a CPU budget: the stack-attention parser of
// stack_attention_ewt_cpu.jsonnet trained with 4 seeds on UD English EWT; each model alone and
// the four as one ensemble (the average of their transition probabilities at every step),
// with greedy decoding (the config's) and with the paper's beam of 8, set at test time.
// Checkpoints are chosen on the last 1,000 sentences of the training file, held out.
//   DEP_TRAIN, DEP_DEV   e.g. DATA/ud/en_ewt/en_ewt-ud-train.conllu and en_ewt-ud-dev.conllu
{
  name: 'stack_attention_ensemble_ewt_cpu',
  config: '../training_config/stack_attention_ewt_cpu.jsonnet',
  budget_minutes: 6,
  seeds: [1, 2, 3, 4],
  overrides: {
    train_data_path: std.extVar('DEP_TRAIN') + '[:11544]',
    validation_data_path: std.extVar('DEP_TRAIN') + '[11544:]',
    // Validation every 60 steps (a third of a pass), so that the budget is used to its end.
    data_loader: { '+batches_per_epoch': 60 },
  },
  evaluate: { dev_first_1000: std.extVar('DEP_DEV') + '[:1000]' },
  metrics: ['UAS', 'LAS'],
  reference_variant: 'single model, greedy',
  reference_source: 'Zhang et al. 2017, PTB-SD test (not EWT), 3-layer GRUs of 500, GloVe, beam 8',
  variants: [
    { name: 'single model, greedy' },
    { name: 'single model, beam 8', test_overrides: { model: { beam_size: 8 } },
      reference: { UAS: 93.71, LAS: 91.60 } },
    { name: 'ensemble of the 4, greedy', ensemble_of: 'single model, greedy' },
    { name: 'ensemble of the 4, beam 8', ensemble_of: 'single model, greedy',
      test_overrides: { model: { '+beam_size': 8 } },
      reference: { UAS: 94.16, LAS: 92.13 } },
  ],
}
