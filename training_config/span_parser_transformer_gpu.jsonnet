// Span parser of Kitaev & Klein (2018) / Kitaev, Cao & Klein (2019, "Multilingual
// Constituency Parsing with Self-Attention and Pre-Training") shaped for the full Penn
// Treebank (WSJ 02-21 train, 22 dev) on one GPU: a fine-tuned pretrained transformer
// (hidden size 1024, e.g. BERT-large-cased), two transformer layers on top, span MLP, CKY.
//   PTB_TRAIN          e.g. /data/ptb/train.trees or /data/wsj/{02..21} as a glob
//   PTB_DEV            e.g. /data/ptb/dev.trees
//   TRANSFORMER_MODEL  a local directory (or hub name where the hub is reachable),
//                      e.g. /models/bert-large-cased
local parsers = import 'parsers.libsonnet';
local model_name = std.extVar('TRANSFORMER_MODEL');
local hidden = 1024;

{
  dataset_reader: parsers.ptb_reader(model_name, max_length=300),
  validation_dataset_reader: parsers.ptb_reader(model_name),
  train_data_path: std.extVar('PTB_TRAIN'),
  validation_data_path: std.extVar('PTB_DEV'),
  model: parsers.span_parser(
    parsers.transformer_embedder(model_name),
    {
      type: 'pytorch_transformer',
      input_dim: hidden,
      num_layers: 2,
      num_attention_heads: 8,
      feedforward_hidden_dim: 2048,
      positional_encoding: 'embedding',
      dropout_prob: 0.2,
    },
    span_hidden_dim=250,
    dropout=0.2,
  ),
  data_loader: {
    batch_sampler: { type: 'bucket', batch_size: 32, sorting_keys: ['tokens'] },
  },
  validation_data_loader: {
    batch_sampler: { type: 'bucket', batch_size: 64, sorting_keys: ['tokens'] },
  },
  trainer: {
    num_epochs: 50,
    patience: 5,
    optimizer: parsers.optimizer(lr=5e-5, transformer_lr=2e-5),
    learning_rate_scheduler: { type: 'slanted_triangular', cut_frac: 0.02 },
    grad_norm: 5.0,
    validation_metric: '+evalb_f1',
    cuda_device: 0,
    use_amp: true,
  },
}
