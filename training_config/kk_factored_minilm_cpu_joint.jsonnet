// Kitaev & Klein's (2018) partitioned (factored) transformer with the joint span decoder, in the
// setting of `lal_minilm_cpu_joint.jsonnet`: the LAL paper's comparison of a self-attention
// encoder without a Label Attention Layer, with constituency F1 and UAS/LAS. MiniLM-L6 (first 4
// layers, scalar mix; embeddings and layer 0 frozen) -> 2 partitioned self-attention layers
// (d_model 256, 8 heads, d_kv 32, d_ff 512) -> joint span labels, biaffine arcs (256) and
// dependency labels (64) on the encoder output and MiniLM's word vectors, lambda = 0.5. Inputs,
// losses and their weights, tagger, optimizer, learning rates and the 14.5-minute budget are
// those of the LAL joint config; only the encoder differs.
//   TRAIN_PATH, DEV_PATH, DEPS_DIR, MINILM_DIR  as in lal_minilm_cpu_joint.jsonnet
local parsers = import 'parsers.libsonnet';
local model_name = std.extVar('MINILM_DIR');
local deps = std.extVar('DEPS_DIR');

parsers.cpu_training(
  std.extVar('TRAIN_PATH'),
  std.extVar('DEV_PATH'),
  parsers.ptb_reader(model_name, max_length=100, dependencies_dir=deps),
  parsers.ptb_reader(model_name, dependencies_dir=deps),
  parsers.joint_parser(
    parsers.transformer_embedder(model_name, last_layer_only=false, layers=4, precision='auto'),
    parsers.partitioned_transformer(384, d_model=256, layers=2, heads=8, d_kv=32, d_ff=512),
    span_hidden_dim=250,
    dropout=0.2,
    span_weight=0.5,
    arc_dim=256,
    label_dim=64,
    span_loss='crf',
  ) + {
    evalb_gold_tags: true,
    pos_tag_input: 'both',
    pos_tag_hidden_dim: 250,
    pos_tag_loss_weight: 20,
    dependency_loss_weight: 10,
    dependency_input: 'both',
  },
  batch_size=16,
  epochs=50,
  minutes=14.5,
  transformer_lr=3e-4,
  frozen_layers=1,
)
