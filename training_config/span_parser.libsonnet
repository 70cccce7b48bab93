// Building blocks shared by the span parser configs (Kitaev & Klein 2018 / Stern et al. 2017
// span parser with a pretrained transformer underneath).
{
  // The Penn Treebank reader with word pieces for `model_name`; `max_length` for training.
  ptb_reader(model_name, max_length=null):: {
    type: 'lal_ptb',
    token_indexers: {
      tokens: { type: 'pretrained_transformer_mismatched', model_name: model_name },
    },
    max_length: max_length,
  },

  // Pretrained transformer (word = mean of its word pieces) -> encoder -> span parser.
  span_parser(model_name, encoder, span_hidden_dim=250, dropout=0.2, train_transformer=true):: {
    type: 'lal_span_parser',
    text_field_embedder: {
      token_embedders: {
        tokens: {
          type: 'pretrained_transformer_mismatched',
          model_name: model_name,
          train_parameters: train_transformer,
        },
      },
    },
    encoder: encoder,
    span_hidden_dim: span_hidden_dim,
    dropout: dropout,
    predict_pos_tags: true,
  },

  // AdamW with a smaller learning rate for the pretrained transformer.
  optimizer(lr, transformer_lr):: {
    type: 'adamw',
    lr: lr,
    parameter_groups: [
      [['text_field_embedder'], { lr: transformer_lr }],
    ],
  },
}
