// `lal_minilm_cpu.jsonnet` with MiniLM under bfloat16 autocast (`embedder_precision`), in
// training and in parsing; everything after the transformer stays in float32. For CPUs with
// native bfloat16 arithmetic (AVX-512 BF16 or AMX), where the transformer's steps are faster
// and more epochs fit the same 14.5-minute budget; on other CPUs torch emulates bfloat16, the
// transformer runs several times slower (the model warns) and this config trains far fewer
// epochs than `lal_minilm_cpu.jsonnet`: there, override `model.embedder_precision` with "auto".
// The POS tagger is an MLP (250 hidden) on the label attention output concatenated with
// MiniLM's word vectors, its loss weighted 10 against the span loss (with weight 1 the tag
// loss is about 1 % of the total and the shared MiniLM is hardly fitted to tagging).
//   TRAIN_PATH, DEV_PATH, MINILM_DIR  as in `lal_minilm_cpu.jsonnet`
local lal = import 'lal_minilm_cpu.jsonnet';

lal + {
  model+: {
    embedder_precision: 'bfloat16',
    pos_tag_input: 'both',
    pos_tag_hidden_dim: 250,
    pos_tag_loss_weight: 10,
  },
}
