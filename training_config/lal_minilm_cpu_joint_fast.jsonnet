// The joint LAL parser of `lal_minilm_cpu_joint.jsonnet` made cheaper to run, for parsing
// throughput: the first 3 MiniLM layers instead of 4 (embeddings and layer 0 still frozen) and a
// dependency label classifier of 32 dimensions instead of 64 (its biaffine form costs
// (dim + 1)^2 per word and label, with hundreds of `P_M` labels). Everything else, the
// 14.5-minute budget included, is that config's.
//   TRAIN_PATH, DEV_PATH, DEPS_DIR, MINILM_DIR  as in lal_minilm_cpu_joint.jsonnet
local joint = import 'lal_minilm_cpu_joint.jsonnet';

joint + {
  model+: {
    dependency_label_dim: 32,
    text_field_embedder+: { token_embedders+: { tokens+: {
      transformer_kwargs+: { num_hidden_layers: 3 },
    } } },
  },
}
