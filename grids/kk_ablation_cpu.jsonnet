// Kitaev & Klein 2018, sec. 3, Table 1 (content or position attention disabled at test time)
// at CPU scale: one trained model per seed, the 'factored' run of `kk_factoring_cpu` (the same
// config, trained once), evaluated with the content term q_c . k_c or the position term
// q_p . k_p of the attention scores dropped in layer 1, layer 2 or both (the CPU encoder has 2
// layers; `zero_content_attention`, `zero_position_attention` of `partitioned_transformer`).
local kk = import 'kk_cpu.libsonnet';
// Merged into the trained model's config for evaluation; '+': the trained config lacks the key.
local content(layers) = { test_overrides: { model: { encoder: {
  '+zero_content_attention': layers,
} } } };
local position(layers) = { test_overrides: { model: { encoder: {
  '+zero_position_attention': layers,
} } } };
kk {
  name: 'kk_ablation_cpu',
  reference_variant: 'none',
  variants: [
    { name: 'none' },
    { name: 'content off, layer 1' } + content([1]),
    { name: 'content off, layer 2' } + content([2]),
    { name: 'content off, all layers' } + content([1, 2]),
    { name: 'position off, layer 1' } + position([1]),
    { name: 'position off, layer 2' } + position([2]),
    { name: 'position off, all layers' } + position([1, 2]),
  ],
}
