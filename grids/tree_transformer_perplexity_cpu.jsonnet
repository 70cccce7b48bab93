// Two claims of the Tree Transformer's slides (seed 003): the constituent prior gives a lower
// masked-LM perplexity than a plain Transformer, and starting from a pretrained BERT makes the
// trees much worse. The masked language model of tree_transformer_lm_cpu.jsonnet, the same
// model without the constituent prior, over AllenNLP's plain Transformer encoder
// (transformer_lm_cpu.jsonnet), and the first started from MiniLM's weights; same data,
// masking, optimiser and budget; checkpoints chosen on a held-out part of the training
// treebank (CALIBRATION_PATH), reported on DEV_PATH.
//   TRAIN_PATHS       comma-separated, e.g. DATA/ptb-sample/trees/wsj_0001-0139,
//                     DATA/ud/en_ewt/en_ewt-ud-train.conllu
//   CALIBRATION_PATH  e.g. DATA/ptb-sample/trees/wsj_0140-0159
//   DEV_PATH          e.g. DATA/ptb-sample/trees/wsj_0160-0179
//   MINILM_DIR        the MiniLM model directory (`make minilm-dir` prints it)
// Every model has MiniLM-L6's sizes (d_model 384, 12 heads, d_ff 1536, 6 layers), so that one
// of them can start from MiniLM's weights.
local embeddings = {
  text_field_embedder: { token_embedders: { tokens: { embedding_dim: 384 } } },
};
local minilm_sizes = {
  model: embeddings { encoder: { input_dim: 384, d_model: 384, num_heads: 12, d_ff: 1536 } },
};
local plain_minilm_sizes = {
  model: embeddings {
    encoder: { input_dim: 384, num_attention_heads: 12, feedforward_hidden_dim: 1536 },
  },
};

{
  name: 'tree_transformer_perplexity_cpu',
  config: '../training_config/tree_transformer_lm_cpu.jsonnet',
  budget_minutes: 20,
  seeds: [1, 2, 3],
  // Validation every 100 steps, so that the budget ends within 100 steps of its end.
  overrides: {
    validation_data_path: std.extVar('CALIBRATION_PATH'),
    data_loader: { '+batches_per_epoch': 100 },
  },
  evaluate: { dev: std.extVar('DEV_PATH') },
  metrics: ['perplexity', 'masked_acc', 'sentence_F1', 'corpus_F1'],
  reference_variant: 'Tree Transformer',
  reference_source: 'Wang et al. 2019 (WSJ test, 60,000 GPU steps; sentence F1 only, no perplexity numbers in the seed)',
  variants: [
    { name: 'Tree Transformer', overrides: minilm_sizes, reference: { sentence_F1: 49.5 } },
    // The same encoder without the link scorers and the prior: what the prior alone does.
    { name: 'Tree Transformer without the prior',
      overrides: minilm_sizes { model+: { encoder+: { '+constituent_prior': false } } } },
    // AllenNLP's post-norm nn.TransformerEncoder of the same sizes.
    { name: 'plain Transformer', config: '../training_config/transformer_lm_cpu.jsonnet',
      overrides: plain_minilm_sizes },
    // Slide 15: starting from a pretrained BERT made the trees much worse.
    { name: "Tree Transformer from MiniLM's weights",
      overrides: minilm_sizes { model+: { '+initial_weights': std.extVar('MINILM_DIR') } } },
  ],
}
