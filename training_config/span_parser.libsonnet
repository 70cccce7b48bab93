// Building blocks shared by the span parser configs (Kitaev & Klein 2018 / Stern et al. 2017
// span parser with a pretrained transformer underneath).
{
  // The Penn Treebank reader with word pieces for `model_name`; `max_length` for training.
  // With `dependencies_dir` (a folder of dependency files named like the treebank files) or
  // `joint=true` (heads from the head rules), instances for `lal_joint_parser`.
  ptb_reader(model_name, max_length=null, dependencies_dir=null, joint=false):: {
    type: 'lal_ptb',
    token_indexers: {
      tokens: { type: 'pretrained_transformer_mismatched', model_name: model_name },
    },
    max_length: max_length,
    [if dependencies_dir != null then 'dependencies_dir']: dependencies_dir,
    [if joint then 'joint_spans']: true,
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

  // The joint span parser (Zhou & Zhao 2019) on the same inputs: span scores plus biaffine
  // arcs and labels, decoded together with weight `span_weight` (lambda) on the spans.
  joint_parser(model_name, encoder, span_hidden_dim=250, dropout=0.2, span_weight=0.5,
               arc_dim=256, label_dim=100, train_transformer=true)::
    $.span_parser(model_name, encoder, span_hidden_dim, dropout, train_transformer) + {
      type: 'lal_joint_parser',
      span_weight: span_weight,
      arc_dim: arc_dim,
      dependency_label_dim: label_dim,
    },

  // AdamW with a smaller learning rate for the pretrained transformer's own weights (the
  // scalar mix of its layers, when there is one, learns at `lr` like the new layers).
  // `frozen_layers = k` (BERT-style parameter names) keeps the transformer's embeddings and
  // its first k layers fixed: no gradient reaches or leaves them, which saves their whole
  // backward pass and the optimizer's work on the word-piece embedding matrix.
  optimizer(lr, transformer_lr, frozen_layers=null)::
    local layers = if frozen_layers == null || frozen_layers == 0 then ''
      else '|encoder\\.layer\\.(' + std.join('|', [std.toString(i) for i in std.range(0, frozen_layers - 1)]) + ')\\.';
    // The frozen parameters' names after `transformer_model.`; the learning-rate group
    // excludes them (a parameter in two groups is an error).
    local frozen = '(embeddings\\.' + layers + ')';
    {
      type: 'fused_adamw',
      lr: lr,
      parameter_groups:
        (if frozen_layers == null then [] else [
           [['text_field_embedder.*transformer_model\\.' + frozen], { requires_grad: false }],
         ]) + [
          [['text_field_embedder.*transformer_model' + (if frozen_layers == null then '' else '\\.(?!' + frozen + ')')],
           { lr: transformer_lr }],
        ],
    },
}
