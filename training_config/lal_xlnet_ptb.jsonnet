// LAL paper, best English setting (Mrini et al. 2020, sec. 3-4): XLNet-large-cased features,
// 3 partitioned self-attention layers (8 heads, d_kv 64, d_model 1024), one Label Attention
// Layer with 112 heads, d_kv = d_proj = 128, position-wise feed-forward layer on, residual
// dropout off, learning rate 5e-5, batches of 100 sentences, one GPU.
// (The paper decodes with the joint-span HPSG decoder; this config trains the constituency
// span parser on the same encoder.)
//   PTB_TRAIN, PTB_DEV    treebank paths, e.g. /data/wsj/wsj_0200-2199 and wsj_2200-2299
//   TRANSFORMER_MODEL     local directory of xlnet-large-cased
local lal = import 'lal.libsonnet';
local model_name = std.extVar('TRANSFORMER_MODEL');

lal.gpu_training(
  std.extVar('PTB_TRAIN'),
  std.extVar('PTB_DEV'),
  lal.ptb_reader(model_name, max_length=300),
  lal.parser(lal.transformer_embedder(model_name), lal.lal_stack(1024)),
)
