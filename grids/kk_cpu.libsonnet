// What the CPU grids of Kitaev & Klein (2018) share: the factored span parser of
// `kk_factored_minilm_cpu.jsonnet` (MiniLM-L6, 2 partitioned self-attention layers, CKY), the
// WSJ sample (train wsj_0001-0139, checkpoints chosen on wsj_0140-0159, evaluated on dev
// wsj_0160-0179), three seeds and one wall-clock budget for every run. The paper's numbers are full-PTB dev (WSJ 22) without
// pretraining, 8 layers of d_model 1024 trained to convergence: a shape to compare with, not
// numbers to match.
//   TRAIN_PATH, DEV_PATH, MINILM_DIR  as in training_config/kk_factored_minilm_cpu.jsonnet
//   CALIBRATION_PATH                  the held-out part of train, e.g. .../wsj_0140-0159
{
  config: '../training_config/kk_factored_minilm_cpu.jsonnet',
  budget_minutes: 2,
  seeds: [1, 2, 3],
  overrides: {
    validation_data_path: std.extVar('CALIBRATION_PATH'),
    // Validation every 40 steps, so that the short budget is used to its end.
    data_loader: { '+batches_per_epoch': 40 },
  },
  evaluate: { dev: std.extVar('DEV_PATH') },
  metrics: ['F1', 'P', 'R'],
}
