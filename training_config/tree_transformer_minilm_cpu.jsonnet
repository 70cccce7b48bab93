// The Tree Transformer's encoder (Wang et al. 2019) inside the supervised span parser, in the
// small CPU setting of `kk_factored_minilm_cpu.jsonnet` and with its shape: MiniLM-L6 (first 4
// layers, scalar mix; embeddings and layer 0 frozen) -> 2 tree_transformer layers (d_model
// 256, 8 heads, d_ff 512; no added positions, MiniLM has them) -> span features -> label MLP
// -> CKY. Inputs, tree CRF loss, optimizer, learning rates, frozen layers and the 14.5-minute
// budget are those of the Kitaev & Klein config; only the encoder differs.
//   TRAIN_PATH, DEV_PATH  e.g. DATA/ptb-sample/trees/wsj_0001-0159 and wsj_0160-0179
//   MINILM_DIR            the MiniLM model directory (`make minilm-dir` prints it)
local parsers = import 'parsers.libsonnet';
local model_name = std.extVar('MINILM_DIR');

parsers.cpu_training(
  std.extVar('TRAIN_PATH'),
  std.extVar('DEV_PATH'),
  parsers.ptb_reader(model_name, max_length=100),
  parsers.ptb_reader(model_name),
  parsers.span_parser(
    parsers.transformer_embedder(model_name, last_layer_only=false, layers=4),
    parsers.tree_transformer(384, d_model=256, layers=2, heads=8, d_ff=512, dropout=0.2,
                             positional_encoding='none'),
    span_hidden_dim=250,
    dropout=0.2,
    span_loss='crf',
    evalb_gold_tags=true,
  ),
  batch_size=16,
  epochs=50,
  minutes=14.5,
  transformer_lr=3e-4,
  frozen_layers=1,
)
