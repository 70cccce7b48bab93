// What the paper-scale grids of the LAL paper's tables share: the joint LAL parser as published
// (training_config/lal_xlnet_ptb_joint.jsonnet: XLNet-large, joint span decoder), full PTB
// (train WSJ 02-21, dev 22, test 23), Stanford basic dependencies, three seeds, trained to the
// config's epochs (early stopping on dev F1) on one GPU per worker, evaluated on dev and test.
//   PTB_TRAIN, PTB_DEV, PTB_TEST, PTB_DEPS, TRANSFORMER_MODEL  e.g. /data/wsj/wsj_0200-2199,
//   /data/wsj/wsj_2200-2299, /data/wsj/wsj_2300-2399, the dependency folder, xlnet-large-cased
{
  config: '../training_config/lal_xlnet_ptb_joint.jsonnet',
  seeds: [1, 2, 3],
  evaluate: { dev: std.extVar('PTB_DEV'), test: std.extVar('PTB_TEST') },
  metrics: ['P', 'R', 'F1', 'UAS', 'LAS', 'POS'],
}
