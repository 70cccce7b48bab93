// Small CPU setting of the LAL stack (Mrini et al. 2020, scaled down): MiniLM-L6
// (all-MiniLM-L6-v2, fine-tuned) -> 2 partitioned self-attention layers (d_model 256, 8 heads,
// d_kv 32) -> one Label Attention Layer (112 heads, d_kv 32, d_proj 16, PFL on, RD off) ->
// per-head span features -> label MLP -> CKY. For the PTB WSJ sample on 2 CPU cores.
//   TRAIN_PATH, DEV_PATH  e.g. ../shared/data/ptb-sample/trees/wsj_0001-0159 and wsj_0160-0179
//   MINILM_DIR            the MiniLM model directory (`make minilm-dir` prints it)
local lal = import 'lal.libsonnet';
local span = import 'span_parser.libsonnet';
local model_name = std.extVar('MINILM_DIR');

{
  dataset_reader: lal.ptb_reader(model_name, max_length=100),
  validation_dataset_reader: lal.ptb_reader(model_name),
  train_data_path: std.extVar('TRAIN_PATH'),
  validation_data_path: std.extVar('DEV_PATH'),
  model: lal.parser(
    lal.transformer_embedder(model_name),
    lal.lal_stack(384, d_model=256, layers=2, heads=8, d_kv=32, label_heads=112, lal_d_kv=32,
                  d_proj=16),
    span_hidden_dim=250,
    dropout=0.2,
  ) + { encoder+: { self_attention+: { d_ff: 512 }, label_attention+: { d_ff: 512 } } },
  data_loader: {
    batch_sampler: { type: 'bucket', batch_size: 32, sorting_keys: ['tokens'] },
  },
  validation_data_loader: {
    batch_sampler: { type: 'bucket', batch_size: 64, sorting_keys: ['tokens'] },
  },
  trainer: {
    num_epochs: 4,
    optimizer: span.optimizer(lr=1e-3, transformer_lr=5e-5),
    learning_rate_scheduler: { type: 'slanted_triangular', cut_frac: 0.06 },
    grad_norm: 5.0,
    validation_metric: '+evalb_f1',
    cuda_device: -1,
  },
}
