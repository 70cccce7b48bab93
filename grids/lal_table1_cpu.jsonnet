// Mrini et al. 2020, Table 1 (position-wise feed-forward layer x residual dropout) at CPU scale:
// the joint LAL parser on the WSJ sample, MiniLM-L6, one short budget, three seeds. The paper's
// numbers are PTB test with XLNet-large (its copy in the seeds lists no row without both).
local cpu = import 'lal_cpu.libsonnet';
cpu {
  name: 'lal_table1_cpu',
  reference_variant: 'PFL yes, RD no',
  reference_source: 'Mrini et al. 2020, Table 1, PTB test, XLNet-large',
  variants: [
    { name: 'PFL yes, RD no', overrides: cpu.lal(pfl=true, rd=false),
      reference: { P: 96.53, R: 96.24, F1: 96.38, UAS: 97.42, LAS: 96.26 } },
    { name: 'PFL yes, RD yes', overrides: cpu.lal(pfl=true, rd=true),
      reference: { P: 96.47, R: 96.20, F1: 96.34, UAS: 97.33, LAS: 96.29 } },
    { name: 'PFL no, RD yes', overrides: cpu.lal(pfl=false, rd=true),
      reference: { P: 96.51, R: 96.15, F1: 96.33, UAS: 97.25, LAS: 96.11 } },
    { name: 'PFL no, RD no', overrides: cpu.lal(pfl=false, rd=false) },
  ],
}
