// LAL paper, Chinese setting (Mrini et al. 2020, sec. 4): BERT-base-chinese features, 3
// partitioned self-attention layers, one Label Attention Layer with 64 heads, d_kv = d_proj =
// 128, PFL on, RD off, learning rate 5e-5, batches of 100, one GPU; CTB 5.1.
//   CTB_TRAIN, CTB_DEV    bracketed CTB 5.1 trees (one file or folder per split, e.g. as
//                         produced by the usual CTB 5.1 preparation scripts)
//   TRANSFORMER_MODEL     local directory of bert-base-chinese (hidden size 768)
local lal = import 'lal.libsonnet';
local model_name = std.extVar('TRANSFORMER_MODEL');

lal.gpu_training(
  std.extVar('CTB_TRAIN'),
  std.extVar('CTB_DEV'),
  lal.ptb_reader(model_name, max_length=300),
  lal.parser(lal.transformer_embedder(model_name), lal.lal_stack(768, label_heads=64)),
)
