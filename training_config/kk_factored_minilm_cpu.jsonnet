// Kitaev & Klein's (2018) partitioned (factored) transformer in the small CPU setting of
// `lal_minilm_cpu.jsonnet`, the LAL paper's comparison on an equal budget: MiniLM-L6 (first 4
// layers, scalar mix; embeddings and layer 0 frozen) -> 2 partitioned self-attention layers
// (d_model 256, 8 heads, d_kv 32, d_ff 512) -> span features -> label MLP -> CKY. Inputs, tree
// CRF loss, optimizer, learning rates, frozen layers and the 14.5-minute wall-clock budget (at
// most 50 epochs) are those of the LAL config; only the encoder differs. Dev EVALB scores the
// brackets with the gold POS tags. The same parser over word representations learned from
// scratch: the `kk_factored_words*_cpu` configs (`parsers.kk_factored_cpu`).
//   TRAIN_PATH, DEV_PATH  e.g. DATA/ptb-sample/trees/wsj_0001-0159 and wsj_0160-0179
//   MINILM_DIR            the MiniLM model directory (`make minilm-dir` prints it)
local parsers = import 'parsers.libsonnet';
local model_name = std.extVar('MINILM_DIR');

parsers.kk_factored_cpu(
  std.extVar('TRAIN_PATH'),
  std.extVar('DEV_PATH'),
  parsers.ptb_reader(model_name, max_length=100),
  parsers.ptb_reader(model_name),
  parsers.transformer_embedder(model_name, last_layer_only=false, layers=4),
  384,
  transformer_lr=3e-4,
  frozen_layers=1,
)
