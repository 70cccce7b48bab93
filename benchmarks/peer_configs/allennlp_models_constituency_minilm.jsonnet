// allennlp-models 2.10.1 `constituency_parser` (Stern et al. 2017 span classifier, greedy
// decoding) on the same inputs as training_config/span_parser_minilm_cpu.jsonnet: MiniLM-L6
// (fine-tuned, word = mean of its word pieces) -> one BiLSTM layer (200 per direction) ->
// bidirectional endpoint span features -> one 250-unit layer -> labels; same optimiser, batch
// size, schedule and model selection (dev EVALB F1). Used by benchmarks/peers_accuracy.py.
//   TRAIN_PATH, DEV_PATH  one tree per line files;  MINILM_DIR  the MiniLM model directory
local model_name = std.extVar('MINILM_DIR');
local reader = {
  type: 'ptb_trees',
  use_pos_tags: true,  // only carried into the output trees: the model embeds no tags
  token_indexers: { tokens: { type: 'pretrained_transformer_mismatched', model_name: model_name } },
};
{
  dataset_reader: reader,
  train_data_path: std.extVar('TRAIN_PATH'),
  validation_data_path: std.extVar('DEV_PATH'),
  model: {
    type: 'constituency_parser',
    text_field_embedder: {
      token_embedders: {
        tokens: { type: 'pretrained_transformer_mismatched', model_name: model_name },
      },
    },
    encoder: { type: 'lstm', input_size: 384, hidden_size: 200, bidirectional: true },
    span_extractor: { type: 'bidirectional_endpoint', input_dim: 400 },
    feedforward: {
      input_dim: 400, num_layers: 1, hidden_dims: 250, activations: 'relu', dropout: 0.2,
    },
  },
  data_loader: { batch_sampler: { type: 'bucket', batch_size: 32, sorting_keys: ['tokens'] } },
  validation_data_loader: {
    batch_sampler: { type: 'bucket', batch_size: 64, sorting_keys: ['tokens'] },
  },
  trainer: {
    num_epochs: 4,
    optimizer: {
      type: 'adamw',
      lr: 1e-3,
      parameter_groups: [[['text_field_embedder'], { lr: 5e-5 }]],
    },
    learning_rate_scheduler: { type: 'slanted_triangular', cut_frac: 0.06 },
    grad_norm: 5.0,
    validation_metric: '+evalb_f1_measure',
    cuda_device: -1,
  },
}
