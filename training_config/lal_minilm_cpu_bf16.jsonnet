// `lal_minilm_cpu.jsonnet` with MiniLM under bfloat16 autocast (the embedder's `precision`), in
// training and in parsing; everything after the transformer stays in float32. For CPUs with
// native bfloat16 arithmetic (AVX-512 BF16 or AMX), where the transformer's steps are faster
// and more epochs fit the same 14.5-minute budget; on other CPUs torch emulates bfloat16, the
// transformer runs several times slower (the embedder warns) and this config trains far fewer
// epochs than `lal_minilm_cpu.jsonnet`: there, override the precision with "auto"
// (`-o '{"model.embedder_precision": "auto"}'` sets it on a trained archive too).
//   TRAIN_PATH, DEV_PATH, MINILM_DIR  as in `lal_minilm_cpu.jsonnet`
local lal = import 'lal_minilm_cpu.jsonnet';

lal + { model+: { text_field_embedder+: { token_embedders+: { tokens+: {
  precision: 'bfloat16',
} } } } }
