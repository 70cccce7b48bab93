// Small CPU setting of the LAL stack (Mrini et al. 2020, scaled down): MiniLM-L6
// (all-MiniLM-L6-v2, fine-tuned, scalar mix of its layers) -> 2 partitioned self-attention
// layers (d_model 256, 8 heads, d_kv 32, d_ff 512) -> one Label Attention Layer (112 heads,
// d_kv 32, d_proj 16, PFL on, RD off) -> per-head span features -> label MLP -> CKY.
// For the PTB WSJ sample on 2 CPU cores; `kk_factored_minilm_cpu.jsonnet` is the same without
// the label attention layer (Kitaev & Klein's partitioned transformer alone), for comparison.
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
    lal.transformer_embedder(model_name, last_layer_only=false),
    lal.lal_stack(384, d_model=256, layers=2, heads=8, d_kv=32, label_heads=112, lal_d_kv=32,
                  d_proj=16),
    span_hidden_dim=250,
    dropout=0.2,
  ) + { encoder+: { self_attention+: { d_ff: 512 }, label_attention+: { d_ff: 512 } } },
  batch_size=16,
)
