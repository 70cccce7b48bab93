// Builders shared by every config in this folder: readers, embedders, encoders, the span and
// joint span parsers, the optimizer and the two training setups (small CPU budget, paper GPU).
// The parsers are the span parser of Stern et al. (2017) and Kitaev & Klein (2018), the Label
// Attention Layer stack of Mrini et al. (2020), Zhou & Zhao's (2019) joint span parser, and the
// Tree Transformer's unsupervised parser (Wang et al. 2019).
// Every ablation switch of the LAL paper's Tables 1 and 2 is a named argument of `lal_stack`,
// with the paper's best English setting as the default.
{
  // ---------------------------------------------------------------------------------------
  // Readers

  // The Penn Treebank reader with word pieces for `model_name` (the `lal_transformer` indexer
  // of `transformer_embedder`); `max_length` for training.
  // With `dependencies_dir` (a folder of dependency files named like the treebank files) or
  // `joint=true` (heads from the head rules), instances for `lal_joint_parser`.
  ptb_reader(model_name, max_length=null, dependencies_dir=null, joint=false):: {
    type: 'lal_ptb',
    token_indexers: {
      tokens: { type: 'lal_transformer', model_name: model_name },
    },
    max_length: max_length,
    [if dependencies_dir != null then 'dependencies_dir']: dependencies_dir,
    [if joint then 'joint_spans']: true,
  },

  // Word/POS/char inputs of Kitaev & Klein without a pretrained model: word embeddings and a
  // CharLSTM, concatenated (a linear map of the concatenation = a sum of projections; the
  // partitioned encoder projects it to the content half and adds learned positions).
  // With `pos=true`, POS tag embeddings too (section 3.1 of the LAL paper: word and POS
  // embeddings summed as the content). Tags come from the trees (in training and on dev); at
  // prediction give them with the input (`"tags"`), else every word gets the unknown tag.
  // `chars=false`: no character ids (for an embedder without `token_characters`).
  char_reader(max_length=null, pos=false, chars=true):: {
    type: 'lal_ptb',
    token_indexers: {
      tokens: { type: 'single_id', lowercase_tokens: false },
      [if chars then 'token_characters']: { type: 'characters', min_padding_length: 1 },
      [if pos then 'pos_tokens']: {
        type: 'single_id',
        namespace: 'pos_tokens',
        feature_name: 'tag_',
        default_value: '@@UNKNOWN@@',
      },
    },
    max_length: max_length,
  },

  // ---------------------------------------------------------------------------------------
  // Embedders

  char_lstm_embedder(word_dim=100, char_dim=64, char_hidden=128, pos_dim=0):: {
    token_embedders: {
      tokens: { type: 'embedding', embedding_dim: word_dim },
      token_characters: { type: 'char_lstm', embedding_dim: char_dim, hidden_dim: char_hidden },
      [if pos_dim > 0 then 'pos_tokens']: { type: 'embedding', embedding_dim: pos_dim },
    },
  },

  // Kitaev & Klein's (2018, sec. 5, Table 3) word representations for `char_reader`: word
  // embeddings, with `pos_dim > 0` POS tag embeddings, and with `chars` a character model:
  //   'lstm'    CharLSTM (`char_lstm`: a BiLSTM over the characters, 2 * `char_hidden`)
  //   'concat'  CharConcat (`char_concat`: the first and last `char_count` characters'
  //             embeddings, 2 * `char_count` * `char_dim`)
  // The reader needs `pos=true` for POS and `chars=true` for a character model.
  // `words_dim(...)` with the same arguments is the embedder's output dimension.
  words_embedder(word_dim=100, pos_dim=0, chars=null, char_dim=32, char_hidden=128,
                 char_count=8):: {
    assert chars == null || chars == 'lstm' || chars == 'concat' :
           "words_embedder: chars is null, 'lstm' or 'concat'",
    token_embedders: {
      tokens: { type: 'embedding', embedding_dim: word_dim },
      [if chars == 'lstm' then 'token_characters']: {
        type: 'char_lstm', embedding_dim: char_dim, hidden_dim: char_hidden,
      },
      [if chars == 'concat' then 'token_characters']: {
        type: 'char_concat', num_characters: char_count, embedding_dim: char_dim,
      },
      [if pos_dim > 0 then 'pos_tokens']: { type: 'embedding', embedding_dim: pos_dim },
    },
  },
  words_dim(word_dim=100, pos_dim=0, chars=null, char_dim=32, char_hidden=128, char_count=8)::
    word_dim + pos_dim
    + (if chars == 'lstm' then 2 * char_hidden else 0)
    + (if chars == 'concat' then 2 * char_count * char_dim else 0),

  // A pretrained transformer (`lal_transformer`), a word being the mean of its word pieces.
  // `train=false`: the transformer's weights stay fixed.
  // `last_layer_only=false`: a learned scalar mix of all the transformer's layers.
  // `layers=k`: keep only the transformer's first k layers (less compute per word).
  // `precision`: 'bfloat16' or 'float16' runs the transformer under autocast in that dtype;
  //   'auto' in the device's native low precision (bfloat16 with AVX-512 BF16 or AMX), else
  //   float32; null leaves the embedder's default ('float32') implicit.
  transformer_embedder(model_name, train=true, last_layer_only=true, layers=null,
                       precision=null):: {
    token_embedders: {
      tokens: {
        type: 'lal_transformer',
        model_name: model_name,
        train_parameters: train,
        [if !last_layer_only then 'last_layer_only']: false,
        [if layers != null then 'transformer_kwargs']: { num_hidden_layers: layers },
        [if precision != null then 'precision']: precision,
      },
    },
  },

  // ---------------------------------------------------------------------------------------
  // Encoders

  // Partitioned (factored) self-attention layers, Kitaev & Klein (2018), sec. 3-4.
  partitioned_transformer(input_dim, d_model=1024, layers=3, heads=8, d_kv=64, d_ff=2048):: {
    type: 'partitioned_transformer',
    input_dim: input_dim,
    d_model: d_model,
    num_layers: layers,
    num_heads: heads,
    d_kv: d_kv,
    d_ff: d_ff,
  },

  // The LAL stack: `layers` partitioned self-attention layers, then one Label Attention Layer.
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

  // The Tree Transformer's encoder (Wang et al. 2019): attention times a constituent prior.
  // The defaults are the paper's; `positional_encoding='none'` over a pretrained transformer,
  // which already encodes positions. `authors=true`: the details of the authors' code where it
  // departs from the paper (neighbour scores / 256, the link scorer's own LayerNorm, a zero
  // prior diagonal so that a word attends only to the others).
  tree_transformer(input_dim, d_model=512, layers=10, heads=8, d_ff=2048, dropout=0.1,
                   positional_encoding='sinusoidal', authors=false):: {
    type: 'tree_transformer',
    input_dim: input_dim,
    d_model: d_model,
    num_layers: layers,
    num_heads: heads,
    d_ff: d_ff,
    dropout: dropout,
    positional_encoding: positional_encoding,
    [if authors then 'score_scale']: 256,
    [if authors then 'link_layer_norm']: true,
    [if authors then 'prior_diagonal']: 0.0,
  },

  // ---------------------------------------------------------------------------------------
  // Models

  // The span parser (`lal_span_parser`): embedder -> encoder -> span features -> label MLP ->
  // CKY, with a POS tagging head.
  //   span_loss        'hinge' (the papers' margin loss) or 'crf' (tree CRF likelihood);
  //                    null leaves the model's default ('hinge') implicit
  //   evalb_gold_tags  dev EVALB of the brackets with the gold POS tags (every sentence counts,
  //                    whatever the predicted tags; as the peers are scored) instead of
  //                    EVALB's own rule
  span_parser(embedder, encoder, span_hidden_dim=250, dropout=0.2, span_loss=null,
              evalb_gold_tags=false):: {
    type: 'lal_span_parser',
    text_field_embedder: embedder,
    encoder: encoder,
    span_hidden_dim: span_hidden_dim,
    dropout: dropout,
    predict_pos_tags: true,
    [if span_loss != null then 'span_loss']: span_loss,
    [if evalb_gold_tags then 'evalb_gold_tags']: true,
  },

  // The joint span (HPSG) parser of Zhou & Zhao (2019), the decoder of the LAL paper
  // (`lal_joint_parser`): the span parser's scores plus biaffine arcs and dependency labels,
  // decoded together with weight `span_weight` (lambda, 0.5 in the paper) on the spans.
  // `arc_dim` and `label_dim` (the arc and dependency label MLP sizes): null leaves the model's
  // defaults (256 and 100) implicit. Needs a reader with dependencies (`ptb_reader`'s
  // `dependencies_dir` or `joint`).
  joint_parser(embedder, encoder, span_hidden_dim=250, dropout=0.2, span_weight=0.5,
               arc_dim=null, label_dim=null, span_loss=null)::
    $.span_parser(embedder, encoder, span_hidden_dim, dropout, span_loss) + {
      type: 'lal_joint_parser',
      span_weight: span_weight,
      [if arc_dim != null then 'arc_dim']: arc_dim,
      [if label_dim != null then 'dependency_label_dim']: label_dim,
    },

  // The Tree Transformer's masked language model (`tree_transformer_lm`) over word embeddings
  // of size `d_model`; trees come from its encoder's link probabilities.
  // `precision`: 'auto' trains and evaluates under bfloat16 autocast where the device has native
  // bfloat16 arithmetic (AVX-512 BF16 or AMX on a CPU), float32 elsewhere.
  // `initial_weights`: a BERT-style model's directory to start from (its sizes are needed).
  tree_transformer_lm(d_model=512, layers=10, heads=8, d_ff=2048, dropout=0.1, authors=false,
                      precision=null, initial_weights=null):: {
    type: 'tree_transformer_lm',
    [if precision != null then 'precision']: precision,
    [if initial_weights != null then 'initial_weights']: initial_weights,
    text_field_embedder: {
      token_embedders: { tokens: { type: 'embedding', embedding_dim: d_model } },
    },
    encoder: $.tree_transformer(d_model, d_model, layers, heads, d_ff, dropout, authors=authors),
    dropout: dropout,
  },

  // The same masked language model over a plain Transformer encoder of the same size
  // (AllenNLP's `pytorch_transformer`, sinusoidal positions): no links, so no trees; the
  // baseline of the Tree Transformer's perplexity comparison.
  transformer_lm(d_model=512, layers=10, heads=8, d_ff=2048, dropout=0.1, precision=null)::
    $.tree_transformer_lm(d_model, layers, heads, d_ff, dropout, precision=precision) + {
      encoder: {
        type: 'pytorch_transformer',
        input_dim: d_model,
        num_layers: layers,
        num_attention_heads: heads,
        feedforward_hidden_dim: d_ff,
        dropout_prob: dropout,
        positional_encoding: 'sinusoidal',
      },
    },

  // ---------------------------------------------------------------------------------------
  // Training

  // AdamW with a smaller learning rate for the pretrained transformer's own weights (the
  // scalar mix of its layers, when there is one, learns at `lr` like the new layers).
  // `frozen_layers = k` (BERT-style parameter names) keeps the transformer's embeddings and
  // its first k layers fixed: no gradient reaches or leaves them, which saves their whole
  // backward pass and the optimizer's work on the word-piece embedding matrix.
  // `transformer_lr = null`: a model without a pretrained transformer, one rate for all.
  optimizer(lr, transformer_lr, frozen_layers=null)::
    if transformer_lr == null then { type: 'fused_adamw', lr: lr } else
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

  // Training on CPU cores with a small fine-tuned transformer: `optimizer` above, slanted
  // triangular schedule, model selection on dev EVALB F1. With `minutes`, a wall-clock budget
  // (the `time_budget` callback: the same schedule over elapsed time, stop after the last
  // epoch that fits; `epochs` is then only an upper bound); without, `epochs` epochs.
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
      optimizer: $.optimizer(lr=lr, transformer_lr=transformer_lr, frozen_layers=frozen_layers),
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

  // Kitaev & Klein's (2018) factored span parser in the small CPU setting: `embedder` (of
  // output dimension `input_dim`) -> 2 partitioned self-attention layers (d_model 256, 8 heads,
  // d_kv 32, d_ff 512) -> span features -> label MLP -> CKY, tree CRF loss, dev EVALB with the
  // gold POS tags; batches of 16, the 14.5-minute wall-clock budget (at most 50 epochs), `lr`
  // 1e-3 for the new layers. `transformer_lr` and `frozen_layers` as in `cpu_training` for a
  // pretrained embedder; `transformer_lr=null` for one without.
  kk_factored_cpu(train_path, dev_path, reader, dev_reader, embedder, input_dim,
                  transformer_lr=null, frozen_layers=null)::
    $.cpu_training(
      train_path,
      dev_path,
      reader,
      dev_reader,
      $.span_parser(
        embedder,
        $.partitioned_transformer(input_dim, d_model=256, layers=2, heads=8, d_kv=32, d_ff=512),
        span_hidden_dim=250,
        dropout=0.2,
        span_loss='crf',
        evalb_gold_tags=true,
      ),
      batch_size=16,
      epochs=50,
      minutes=14.5,
      transformer_lr=transformer_lr,
      frozen_layers=frozen_layers,
    ),

  // `kk_factored_cpu` over Kitaev & Klein's word representations learned from scratch (sec. 5,
  // Table 3; `words_embedder`'s `pos_dim` and `chars`) on `char_reader`. The sizes follow the
  // paper's with the content half of `d_model` 256: word (and tag) embeddings of 128, a
  // CharLSTM of 2 x 64, CharConcat of 16 x 32 characters; character embeddings of 32. Words seen
  // once in training become the unknown word, so that its embedding is trained (the CharLSTM
  // and CharConcat still see their characters).
  kk_words_cpu(train_path, dev_path, pos_dim=0, chars=null, word_dim=128, char_dim=32,
               char_hidden=64)::
    local pos = pos_dim > 0;
    local has_chars = chars != null;
    $.kk_factored_cpu(
      train_path,
      dev_path,
      $.char_reader(max_length=100, pos=pos, chars=has_chars),
      $.char_reader(pos=pos, chars=has_chars),
      $.words_embedder(word_dim, pos_dim, chars, char_dim, char_hidden),
      $.words_dim(word_dim, pos_dim, chars, char_dim, char_hidden),
    ) + { vocabulary: { min_count: { tokens: 2 } } },

  // GPU training as in the papers: AdamW, learning rate 5e-5, batches of `batch_size`
  // sentences, warm-up then linear decay, model selection on dev EVALB F1, mixed precision.
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

  // The LAL paper's best English model with its decoder, the joint span (HPSG) parser, on a GPU
  // (`lal_xlnet_ptb_joint.jsonnet`): XLNet-large features, 3 partitioned self-attention layers,
  // one Label Attention Layer of 112 heads, hinge span loss, lambda = 0.5; `deps` the folder of
  // dependency files. The switches of its Tables 1 and 2 as in `lal_stack` (`pfl`, `rd`, `qv`,
  // `conc`), and `layers` the self-attention layers below the LAL (sec. 4.1).
  lal_xlnet_joint(train_path, dev_path, model_name, deps, layers=3, pfl=true, rd=false, qv=true,
                  conc=true)::
    $.gpu_training(
      train_path,
      dev_path,
      $.ptb_reader(model_name, max_length=300, dependencies_dir=deps),
      $.joint_parser(
        $.transformer_embedder(model_name),
        $.lal_stack(1024, layers=layers, pfl=pfl, rd=rd, qv=qv, conc=conc),
        span_loss='hinge',
      ),
    ) + { validation_dataset_reader: $.ptb_reader(model_name, dependencies_dir=deps) },

  // Masked language model training as the Tree Transformer's authors: raw words (lowercased,
  // digits -> N, punctuation removed, sentences over 70 words skipped) from `train_paths`
  // (comma-separated treebank, CoNLL-U or plain-text paths), words seen once map to the
  // unknown word, Adam with beta (0.9, 0.98), gradient norm clipped at 1.5, batches of
  // `batch_size` sentences. Model selection on dev perplexity of the masked words (the dev
  // trees are only scored, never used to choose). With `minutes`, a wall-clock budget (the
  // `time_budget` callback, warm-up then decay); without, a constant learning rate.
  // `batches_per_epoch`: validate every that many steps instead of once per pass over the data
  // (a learning curve against steps).
  lm_training(train_paths, dev_path, model, batch_size=64, lr=1e-4, epochs=100, minutes=null,
              cuda_device=-1, batches_per_epoch=null):: {
    local reader = {
      type: 'lal_sentences',
      lowercase: true,
      digits_to_n: true,
      remove_punctuation: true,
    },
    dataset_reader: reader { max_length: 70 },
    validation_dataset_reader: reader,
    train_data_path: train_paths,
    validation_data_path: dev_path,
    vocabulary: { min_count: { tokens: 2 } },
    model: model,
    data_loader: {
      batch_sampler: { type: 'bucket', batch_size: batch_size, sorting_keys: ['tokens'] },
      [if batches_per_epoch != null then 'batches_per_epoch']: batches_per_epoch,
    },
    validation_data_loader: {
      batch_sampler: { type: 'bucket', batch_size: 64, sorting_keys: ['tokens'] },
    },
    trainer: {
      num_epochs: epochs,
      optimizer: { type: 'adam', lr: lr, betas: [0.9, 0.98], eps: 1e-9 },
      [if minutes != null then 'callbacks']: [
        { type: 'time_budget', minutes: minutes, cut_frac: 0.06 },
      ],
      grad_norm: 1.5,
      // AllenNLP's normalisation-bias check goes by the order modules run in, not by what
      // feeds what: the link scorer's own LayerNorm (`link_layer_norm`) runs right after the
      // attention's pre-norm on the same input and is reported as a norm fed by a biased layer.
      run_confidence_checks: false,
      validation_metric: '-perplexity',
      cuda_device: cuda_device,
      [if cuda_device >= 0 then 'use_amp']: true,
    },
  },

  // The stack-based multi-layer attention parser (`stack_attention_parser`, Zhang et al. 2017):
  // word (+ POS) embeddings -> bidirectional GRU encoder -> GRU decoder of arc-standard
  // transitions with the stack attention. The paper's ablations are the arguments
  // `attention_layers`, `use_pushed` (s), `use_popped` (r) and `pos_dim` (0: no POS input).
  stack_attention_parser(word_dim=300, pos_dim=32, encoder_dim=500, encoder_layers=3,
                         decoder_dim=500, decoder_layers=3, attention_dim=null,
                         attention_layers=3, use_pushed=true, use_popped=true, dropout=0.2,
                         beam_size=8, punctuation_tags=['``', "''", ',', '.', ':'],
                         pretrained_file=null):: {
    type: 'stack_attention_parser',
    text_field_embedder: {
      token_embedders: {
        tokens: {
          type: 'embedding',
          embedding_dim: word_dim,
          [if pretrained_file != null then 'pretrained_file']: pretrained_file,
          [if pretrained_file != null then 'trainable']: true,
        },
      },
    },
    [if pos_dim > 0 then 'pos_tag_embedding']: {
      embedding_dim: pos_dim,
      vocab_namespace: 'pos',
    },
    encoder: {
      type: 'gru',
      input_size: word_dim + pos_dim,
      hidden_size: encoder_dim,
      num_layers: encoder_layers,
      bidirectional: true,
      dropout: if encoder_layers > 1 then dropout else 0.0,
    },
    decoder_hidden_dim: decoder_dim,
    decoder_layers: decoder_layers,
    [if attention_dim != null then 'attention_dim']: attention_dim,
    attention_layers: attention_layers,
    use_pushed: use_pushed,
    use_popped: use_popped,
    dropout: dropout,
    beam_size: beam_size,
    punctuation_tags: punctuation_tags,
  },

  // Dependency parsing on dependency files (`lal_dependencies`: CoNLL-X, CoNLL-U, Malt-TAB).
  // Training instances carry the oracle's transitions (non-projective training trees are
  // counted and skipped); dev trees are read as they are. `coarse_tags`: UD's UPOS column as
  // the POS tags. Model selection on dev LAS; with `minutes`, a wall-clock budget (`time_budget`).
  dependency_training(train_path, dev_path, model, coarse_tags=false, batch_size=64, lr=2e-3,
                      epochs=100, minutes=null, cuda_device=-1):: {
    local reader = { type: 'lal_dependencies', coarse_tags: coarse_tags },
    dataset_reader: reader,
    validation_dataset_reader: reader { transitions: false },
    train_data_path: train_path,
    validation_data_path: dev_path,
    vocabulary: { min_count: { tokens: 2 } },
    model: model,
    data_loader: {
      batch_sampler: { type: 'bucket', batch_size: batch_size, sorting_keys: ['words'] },
    },
    validation_data_loader: {
      batch_sampler: { type: 'bucket', batch_size: 128, sorting_keys: ['words'] },
    },
    trainer: {
      num_epochs: epochs,
      optimizer: { type: 'adam', lr: lr, betas: [0.9, 0.9] },
      [if minutes != null then 'callbacks']: [
        { type: 'time_budget', minutes: minutes, cut_frac: 0.06 },
      ],
      grad_norm: 5.0,
      validation_metric: '+LAS',
      cuda_device: cuda_device,
    },
  },

  // The stack attention parser in a small CPU setting, for the paper's comparisons on one
  // treebank: 100-d words trained from scratch (no GloVe here), 32-d POS, a 2-layer BiGRU of 200
  // units, one decoder GRU of 200, attention scores of 100, greedy decoding at validation (beam
  // search is an evaluation override), Adam at a peak rate of 5e-3 (the decoder learns where the
  // stack is slowly at lower rates), a wall-clock budget. `ud`: UPOS tags and PUNCT left out
  // of UAS/LAS (UD treebanks); otherwise the PTB tags and punctuation.
  stack_attention_cpu(train_path, dev_path, ud=true, attention_layers=3, use_pushed=true,
                      use_popped=true, pos_dim=32, minutes=10)::
    $.dependency_training(
      train_path,
      dev_path,
      $.stack_attention_parser(
        word_dim=100,
        pos_dim=pos_dim,
        encoder_dim=200,
        encoder_layers=2,
        decoder_dim=200,
        decoder_layers=1,
        attention_dim=100,
        attention_layers=attention_layers,
        use_pushed=use_pushed,
        use_popped=use_popped,
        beam_size=1,
        punctuation_tags=if ud then ['PUNCT'] else ['``', "''", ',', '.', ':'],
      ),
      coarse_tags=ud,
      lr=5e-3,
      minutes=minutes,
    ),

  // The graph-based baseline for `stack_attention_cpu`: allennlp-models' `biaffine_parser`
  // (Dozat & Manning 2017) on the same reader (without transitions), inputs (100-d words from
  // scratch, 32-d POS), encoder (2-layer BiGRU of 200) and budget; Adam at Dozat & Manning's
  // rate, 2e-3, with their betas (0.9, 0.9).
  biaffine_cpu(train_path, dev_path, ud=true, minutes=10)::
    $.dependency_training(
      train_path,
      dev_path,
      {
        // biaffine_parser, named by its class so that it loads without the plugin discovery.
        type: 'allennlp_models.structured_prediction.models.biaffine_dependency_parser.'
              + 'BiaffineDependencyParser',
        text_field_embedder: {
          token_embedders: { tokens: { type: 'embedding', embedding_dim: 100 } },
        },
        pos_tag_embedding: { embedding_dim: 32, vocab_namespace: 'pos' },
        encoder: {
          type: 'gru',
          input_size: 132,
          hidden_size: 200,
          num_layers: 2,
          bidirectional: true,
          dropout: 0.2,
        },
        arc_representation_dim: 200,
        tag_representation_dim: 100,
        dropout: 0.2,
        input_dropout: 0.2,
      },
      coarse_tags=ud,
      minutes=minutes,
    ) + { dataset_reader+: { transitions: false } },
}
