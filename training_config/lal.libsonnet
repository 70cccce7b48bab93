// Building blocks of the Label Attention Layer parser (Mrini et al. 2020) and of Kitaev &
// Klein's (2018) factored self-attentive parser, shared by the configs in this folder.
// Every ablation switch of the LAL paper's Tables 1 and 2 is a named argument here, with the
// paper's best English setting as the default.
local span = import 'span_parser.libsonnet';

{
  ptb_reader:: span.ptb_reader,

  // Word/POS/char inputs of Kitaev & Klein without a pretrained model: word embeddings and a
  // CharLSTM, concatenated (a linear map of the concatenation = a sum of projections; the
  // partitioned encoder projects it to the content half and adds learned positions).
  // With `pos=true`, POS tag embeddings too (section 3.1 of the LAL paper: word and POS
  // embeddings summed as the content). Tags come from the trees in training; at prediction
  // give them with the input (`"tags"`), else every word gets the unknown tag.
  char_reader(max_length=null, pos=false):: {
    type: 'lal_ptb',
    token_indexers: {
      tokens: { type: 'single_id', lowercase_tokens: false },
      token_characters: { type: 'characters', min_padding_length: 1 },
      [if pos then 'pos_tokens']: {
        type: 'single_id',
        namespace: 'pos_tokens',
        feature_name: 'tag_',
        default_value: '@@UNKNOWN@@',
      },
    },
    max_length: max_length,
  },
  char_lstm_embedder(word_dim=100, char_dim=64, char_hidden=128, pos_dim=0):: {
    token_embedders: {
      tokens: { type: 'embedding', embedding_dim: word_dim },
      token_characters: { type: 'char_lstm', embedding_dim: char_dim, hidden_dim: char_hidden },
      [if pos_dim > 0 then 'pos_tokens']: { type: 'embedding', embedding_dim: pos_dim },
    },
  },
  // `last_layer_only=false`: a learned scalar mix of all the transformer's layers.
  // `layers=k`: keep only the transformer's first k layers (less compute per word).
  transformer_embedder(model_name, train=true, last_layer_only=true, layers=null):: {
    token_embedders: {
      tokens: {
        type: 'pretrained_transformer_mismatched',
        model_name: model_name,
        train_parameters: train,
        [if !last_layer_only then 'last_layer_only']: false,
        [if layers != null then 'transformer_kwargs']: { num_hidden_layers: layers },
      },
    },
  },

  // Training on 2 CPU cores with a small fine-tuned transformer (the CPU comparison configs):
  // AdamW, `lr` for the new layers and `transformer_lr` for the transformer, slanted
  // triangular schedule, model selection on dev EVALB F1. With `minutes`, a wall-clock
  // budget (the `time_budget` callback: the same schedule over elapsed time, stop after the
  // last epoch that fits; `epochs` is then only an upper bound); without, `epochs` epochs.
  cpu_training(train_path, dev_path, reader, dev_reader, model, batch_size=32, epochs=3,
               lr=1e-3, transformer_lr=5e-5, minutes=null, frozen_layers=null):: {
    dataset_reader: reader,
    validation_dataset_reader: dev_reader,
    train_data_path: train_path,
    validation_data_path: dev_path,
    model: model,
    data_loader: {
      batch_sampler: { type: 'bucket', batch_size: batch_size, sorting_keys: ['tokens'] },
    },
    validation_data_loader: {
      batch_sampler: { type: 'bucket', batch_size: 64, sorting_keys: ['tokens'] },
    },
    trainer: {
      num_epochs: epochs,
      optimizer: span.optimizer(lr=lr, transformer_lr=transformer_lr, frozen_layers=frozen_layers),
      [if minutes == null then 'learning_rate_scheduler']: {
        type: 'slanted_triangular',
        cut_frac: 0.06,
      },
      [if minutes != null then 'callbacks']: [
        { type: 'time_budget', minutes: minutes, cut_frac: 0.06 },
      ],
      grad_norm: 5.0,
      validation_metric: '+evalb_f1',
      cuda_device: -1,
    },
  },

  // Partitioned (factored) self-attention layers, Kitaev & Klein (2018), sec. 3-4.
  partitioned_transformer(input_dim, d_model=1024, layers=3, heads=8, d_kv=64, d_ff=2048):: {
    input_dim: input_dim,
    d_model: d_model,
    num_layers: layers,
    num_heads: heads,
    d_kv: d_kv,
    d_ff: d_ff,
  },

  // The LAL stack: partitioned self-attention layers, then one Label Attention Layer.
  //   qv   query vectors (true) or a query matrix as in self-attention (Table 2, "QV")
  //   conc concatenate the heads (true) or combine them as in self-attention (Table 2, "Conc.")
  //   pfl  position-wise feed-forward layer after the LAL (Table 1, "PFL")
  //   rd   residual dropout on each head's output (Table 1, "RD"; 0.2 as Zhou & Zhao when on)
  lal_stack(input_dim, d_model=1024, layers=3, heads=8, d_kv=64, label_heads=112, lal_d_kv=128,
            d_proj=128, qv=true, conc=true, pfl=true, rd=false):: {
    type: 'lal_stack',
    input_dim: input_dim,
    self_attention: {
      d_model: d_model,
      num_layers: layers,
      num_heads: heads,
      d_kv: d_kv,
    },
    label_attention: {
      num_heads: label_heads,
      d_kv: lal_d_kv,
      d_proj: d_proj,
      query_vectors: qv,
      concatenate_heads: conc,
      use_feed_forward: pfl,
      residual_dropout: if rd then 0.2 else 0.0,
    },
  },

  // span_loss: 'hinge' (the papers' margin loss) or 'crf' (tree CRF likelihood).
  // gold_tag_evalb: dev EVALB of the brackets with the gold POS tags (every sentence counts,
  // whatever the predicted tags; as the peers are scored), instead of EVALB's own rule.
  parser(embedder, encoder, span_hidden_dim=250, dropout=0.2, span_loss='hinge',
         gold_tag_evalb=false):: {
    type: 'lal_span_parser',
    text_field_embedder: embedder,
    encoder: encoder,
    span_hidden_dim: span_hidden_dim,
    dropout: dropout,
    predict_pos_tags: true,
    span_loss: span_loss,
    [if gold_tag_evalb then 'evalb_gold_tags']: true,
  },

  // The LAL parser as published: the joint span (HPSG) parser of Zhou & Zhao (2019) on the
  // LAL stack, decoded with lambda = `span_weight` on the spans (0.5 in the paper).
  joint_parser(embedder, encoder, span_hidden_dim=250, dropout=0.2, span_weight=0.5)::
    $.parser(embedder, encoder, span_hidden_dim, dropout) + {
      type: 'lal_joint_parser',
      span_weight: span_weight,
    },

  // GPU training as in the papers: Adam(W), learning rate 5e-5, batches of `batch_size`
  // sentences, warm-up then linear decay, model selection on dev EVALB F1.
  gpu_training(train_path, dev_path, reader, model, batch_size=100, lr=5e-5, epochs=50):: {
    dataset_reader: reader,
    train_data_path: train_path,
    validation_data_path: dev_path,
    model: model,
    data_loader: {
      batch_sampler: { type: 'bucket', batch_size: batch_size, sorting_keys: ['tokens'] },
    },
    validation_data_loader: {
      batch_sampler: { type: 'bucket', batch_size: batch_size, sorting_keys: ['tokens'] },
    },
    trainer: {
      num_epochs: epochs,
      patience: 8,
      optimizer: { type: 'fused_adamw', lr: lr, weight_decay: 0.0 },
      learning_rate_scheduler: { type: 'linear_with_warmup', warmup_steps: 1600 },
      grad_norm: 1.0,
      validation_metric: '+evalb_f1',
      cuda_device: 0,
      use_amp: true,
    },
  },
}
