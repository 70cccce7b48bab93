// What the CPU grids of the LAL paper's tables share: the joint LAL parser of
// `lal_minilm_cpu_joint.jsonnet` (MiniLM-L6, one Label Attention Layer of 112 heads, joint span
// decoder), the WSJ sample (train wsj_0001-0159, evaluated on dev wsj_0160-0179), three seeds
// and one wall-clock budget for every run. An epoch is cut at 107 batches (about half the
// training set) so that each run is validated several times for the learning curves.
//   TRAIN_PATH, DEV_PATH, DEPS_DIR, MINILM_DIR  as in training_config/lal_minilm_cpu_joint.jsonnet
{
  config: '../training_config/lal_minilm_cpu_joint.jsonnet',
  budget_minutes: 2.5,
  seeds: [1, 2, 3],
  overrides: { data_loader: { '+batches_per_epoch': 107 } },
  evaluate: { dev: std.extVar('DEV_PATH') },
  metrics: ['F1', 'UAS', 'LAS', 'POS'],

  // The label attention layer's switches (training_config/parsers.libsonnet, `lal_stack`).
  lal(pfl=true, rd=false, qv=true, conc=true):: {
    model: { encoder: { label_attention: {
      use_feed_forward: pfl,
      residual_dropout: if rd then 0.2 else 0.0,
      query_vectors: qv,
      concatenate_heads: conc,
    } } },
  },
}
