// The models of the confidence study (docs/confidence.md): the label attention parser with the
// span CKY (`lal_minilm_cpu`) and with the joint span decoder (`lal_minilm_cpu_joint`), both
// trained as tree CRFs, on the WSJ sample with a part of train held apart: the models train on
// TRAIN_PATH, are validated (checkpoint choice) on CALIBRATION_PATH, whose sentences also fit
// the temperatures (`lal-calibrate`), and are reported on DEV_PATH, which nothing is chosen on.
// Three seeds, one wall-clock budget.
//   TRAIN_PATH        e.g. DATA/ptb-sample/trees/wsj_0001-0139
//   CALIBRATION_PATH  e.g. DATA/ptb-sample/trees/wsj_0140-0159
//   DEV_PATH          e.g. DATA/ptb-sample/trees/wsj_0160-0179
//   DEPS_DIR, MINILM_DIR  as in training_config/lal_minilm_cpu_joint.jsonnet
local calibration = std.extVar('CALIBRATION_PATH');
{
  name: 'confidence_cpu',
  config: '../training_config/lal_minilm_cpu_joint.jsonnet',
  budget_minutes: 5,
  seeds: [1, 2, 3],
  overrides: { validation_data_path: calibration },
  evaluate: { calibration: calibration, dev: std.extVar('DEV_PATH') },
  metrics: ['F1', 'UAS', 'LAS', 'POS'],
  variants: [
    { name: 'joint (lal_minilm_cpu_joint)' },
    { name: 'span (lal_minilm_cpu)', config: '../training_config/lal_minilm_cpu.jsonnet' },
  ],
}
