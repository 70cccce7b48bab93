// Mrini et al. 2020, sec. 4.1 ("our model requires fewer self-attention layers"): 0, 1, 2 and 4
// partitioned self-attention layers below the Label Attention Layer, and Kitaev & Klein's
// partitioned encoder without a LAL (2 layers) beside them, all joint parsers at the same CPU
// budget on the WSJ sample, three seeds. The paper tried 2-16 layers with XLNet-large and found
// 3 and 4 tied; it gives no table of them.
local cpu = import 'lal_cpu.libsonnet';
local layers(k) = cpu.lal() + { model+: { encoder+: { self_attention: { num_layers: k } } } };
cpu {
  name: 'lal_layers_cpu',
  reference_variant: 'LAL, 0 self-attention layers',
  variants: [
    { name: 'LAL, 0 self-attention layers', overrides: layers(0) },
    { name: 'LAL, 1 self-attention layer', overrides: layers(1) },
    { name: 'LAL, 2 self-attention layers', overrides: layers(2) },
    { name: 'LAL, 4 self-attention layers', overrides: layers(4) },
    { name: 'K&K partitioned, 2 layers, no LAL',
      config: '../training_config/kk_factored_minilm_cpu_joint.jsonnet' },
  ],
}
