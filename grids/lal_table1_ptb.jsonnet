// Mrini et al. 2020, Table 1 (position-wise feed-forward layer x residual dropout) at the paper's
// scale: the `lal_ablation_*` configs, three seeds each, evaluated on PTB dev and test.
local ptb = import 'lal_ptb.libsonnet';
ptb {
  name: 'lal_table1_ptb',
  reference_variant: 'PFL yes, RD no',
  reference_source: 'Mrini et al. 2020, Table 1, PTB test, XLNet-large',
  variants: [
    { name: 'PFL yes, RD no', reference: { P: 96.53, R: 96.24, F1: 96.38, UAS: 97.42, LAS: 96.26 } },
    { name: 'PFL yes, RD yes', config: '../training_config/lal_ablation_pfl_rd.jsonnet',
      reference: { P: 96.47, R: 96.20, F1: 96.34, UAS: 97.33, LAS: 96.29 } },
    { name: 'PFL no, RD yes', config: '../training_config/lal_ablation_nopfl_rd.jsonnet',
      reference: { P: 96.51, R: 96.15, F1: 96.33, UAS: 97.25, LAS: 96.11 } },
    { name: 'PFL no, RD no', config: '../training_config/lal_ablation_nopfl_nord.jsonnet' },
  ],
}
