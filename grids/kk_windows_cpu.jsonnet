// Kitaev & Klein 2018, sec. 4.2 (windowed attention at test time) at CPU scale: one trained
// model per seed, the 'factored' run of `kk_factoring_cpu` (the same config, trained once),
// evaluated with each query attending only to keys at most w positions away ("strict"), or to
// those and the START token, the first word, the last word and the STOP token ("relaxed");
// `attention_window` and `window_mode` of `partitioned_transformer`.
local kk = import 'kk_cpu.libsonnet';
// Merged into the trained model's config for evaluation; '+': the trained config lacks the keys.
local strict(w) = { name: 'strict window ' + w, test_overrides: { model: { encoder: {
  '+attention_window': w,
} } } };
local relaxed(w) = { name: 'relaxed window ' + w, test_overrides: { model: { encoder: {
  '+attention_window': w, '+window_mode': 'relaxed',
} } } };
kk {
  name: 'kk_windows_cpu',
  reference_variant: 'no window',
  variants: [{ name: 'no window' }]
            + [strict(w) for w in [1, 2, 5, 10]]
            + [relaxed(w) for w in [1, 2, 5, 10]],
}
