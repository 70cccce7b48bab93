// Mrini et al. 2020, Table 2 (query vectors x concatenation of the heads) at the paper's scale:
// the `lal_ablation_*` configs, three seeds each, evaluated on PTB dev and test.
local ptb = import 'lal_ptb.libsonnet';
ptb {
  name: 'lal_table2_ptb',
  reference_variant: 'QV yes, Conc yes',
  reference_source: 'Mrini et al. 2020, Table 2, PTB test, XLNet-large',
  variants: [
    { name: 'QV yes, Conc yes', reference: { P: 96.53, R: 96.24, F1: 96.38, UAS: 97.42, LAS: 96.26 } },
    { name: 'QV no, Conc yes', config: '../training_config/lal_ablation_noqv_conc.jsonnet',
      reference: { P: 96.43, R: 96.03, F1: 96.23, UAS: 97.25, LAS: 96.12 } },
    { name: 'QV yes, Conc no', config: '../training_config/lal_ablation_qv_noconc.jsonnet',
      reference: { P: 96.30, R: 96.10, F1: 96.20, UAS: 97.23, LAS: 96.15 } },
    { name: 'QV no, Conc no', config: '../training_config/lal_ablation_noqv_noconc.jsonnet',
      reference: { P: 96.30, R: 96.06, F1: 96.18, UAS: 97.26, LAS: 96.17 } },
  ],
}
