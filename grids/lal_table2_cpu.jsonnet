// Mrini et al. 2020, Table 2 (query vectors x concatenation of the heads) at CPU scale: the
// joint LAL parser on the WSJ sample, MiniLM-L6, one short budget, three seeds; PFL on, RD off
// (the paper's best setting) in every row. The paper's numbers are PTB test with XLNet-large.
local cpu = import 'lal_cpu.libsonnet';
cpu {
  name: 'lal_table2_cpu',
  reference_variant: 'QV yes, Conc yes',
  reference_source: 'Mrini et al. 2020, Table 2, PTB test, XLNet-large',
  variants: [
    { name: 'QV yes, Conc yes', overrides: cpu.lal(qv=true, conc=true),
      reference: { P: 96.53, R: 96.24, F1: 96.38, UAS: 97.42, LAS: 96.26 } },
    { name: 'QV no, Conc yes', overrides: cpu.lal(qv=false, conc=true),
      reference: { P: 96.43, R: 96.03, F1: 96.23, UAS: 97.25, LAS: 96.12 } },
    { name: 'QV yes, Conc no', overrides: cpu.lal(qv=true, conc=false),
      reference: { P: 96.30, R: 96.10, F1: 96.20, UAS: 97.23, LAS: 96.15 } },
    { name: 'QV no, Conc no', overrides: cpu.lal(qv=false, conc=false),
      reference: { P: 96.30, R: 96.06, F1: 96.18, UAS: 97.26, LAS: 96.17 } },
  ],
}
