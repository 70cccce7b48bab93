// The plain partitioned (factored) transformer of Kitaev & Klein (2018) in the small CPU
// setting of `lal_minilm_cpu.jsonnet`, for the LAL paper's comparison on the same budget:
// MiniLM-L6 (first 4 layers, scalar mix; embeddings and layer 0 frozen) -> 2 partitioned
// self-attention layers (d_model 256, 8 heads, d_kv 32, d_ff 512) -> span features -> label
// MLP -> CKY. Same inputs, loss (tree CRF), optimiser, learning rates, frozen layers and
// wall-clock budget (14.5 minutes, at most 50 epochs) as the LAL config; the label attention
// layer replaced by Kitaev & Klein's encoder.
//   TRAIN_PATH, DEV_PATH  e.g. ../shared/data/ptb-sample/trees/wsj_0001-0159 and wsj_0160-0179
//   MINILM_DIR            the MiniLM model directory (`make minilm-dir` prints it)
local lal = import 'lal.libsonnet';
local model_name = std.extVar('MINILM_DIR');

lal.cpu_training(
  std.extVar('TRAIN_PATH'),
  std.extVar('DEV_PATH'),
  lal.ptb_reader(model_name, max_length=100),
  lal.ptb_reader(model_name),
  lal.parser(
    lal.transformer_embedder(model_name, last_layer_only=false, layers=4),
    { type: 'partitioned_transformer' }
    + lal.partitioned_transformer(384, d_model=256, layers=2, heads=8, d_kv=32, d_ff=512),
    span_hidden_dim=250,
    dropout=0.2,
    span_loss='crf',
    gold_tag_evalb=true,
  ),
  batch_size=16,
  epochs=50,
  minutes=14.5,
  transformer_lr=3e-4,
  frozen_layers=1,
)
