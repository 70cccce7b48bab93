// Mrini et al. 2020, sec. 4.1 at the paper's scale: 0 to 4 partitioned self-attention layers
// below the Label Attention Layer (the paper uses 3), and Kitaev & Klein's encoder without a
// LAL beside them, all joint parsers, three seeds, PTB dev and test.
local ptb = import 'lal_ptb.libsonnet';
local layers(k) = { model: { encoder: { self_attention: { num_layers: k } } } };
ptb {
  name: 'lal_layers_ptb',
  reference_variant: 'LAL, 3 self-attention layers',
  variants: [
    { name: 'LAL, 0 self-attention layers', overrides: layers(0) },
    { name: 'LAL, 1 self-attention layer', overrides: layers(1) },
    { name: 'LAL, 2 self-attention layers', overrides: layers(2) },
    { name: 'LAL, 3 self-attention layers', overrides: layers(3),
      reference: { F1: 96.38, UAS: 97.42, LAS: 96.26 } },
    { name: 'LAL, 4 self-attention layers', overrides: layers(4) },
    { name: 'K&K partitioned, 2 layers, no LAL',
      config: '../training_config/kk_factored_transformer_ptb_joint.jsonnet' },
  ],
}
