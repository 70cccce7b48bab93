// The LAL paper's headline model on the CPU budget: the label attention parser of
// `lal_minilm_cpu.jsonnet` (MiniLM-L6, first 4 layers with a scalar mix, embeddings and layer 0
// frozen -> one Label Attention Layer of 112 heads) with the joint span (HPSG) decoder of Zhou &
// Zhao (2019) in place of the span-only CKY: joint span labels (with <H>) scored from the label
// attention's per-head span features, biaffine arcs and dependency labels from its word vectors
// concatenated with MiniLM's (`dependency_input: both`), decoded together with lambda = 0.5.
// Tree CRF loss on the spans; the head and dependency label losses (per-word means) weighted 10
// and the tagger (an MLP on the LAL output and MiniLM's word vectors) weighted 20, so that they
// are not lost beside the span loss (a sum over each tree's spans); MiniLM under bfloat16
// autocast where the CPU has native bfloat16 arithmetic (AVX-512 BF16 or AMX) and in float32
// elsewhere, where emulated bfloat16 is several times slower (the embedder's `precision: 'auto'`),
// 14.5 minutes of training (`time_budget`), dev EVALB with gold POS tags.
//   TRAIN_PATH, DEV_PATH  e.g. DATA/ptb-sample/trees/wsj_0001-0159 and wsj_0160-0179
//   DEPS_DIR              dependency files named like the tree files (wsj_0001.dp: Malt-TAB,
//                         CoNLL-X or CoNLL-U), e.g. DATA/ptb-sample/deps; the WSJ
//                         sample's .dp files have no labels, so each arc is labelled P_M from
//                         the tree (the word's maximal projection M and its parent P)
//   MINILM_DIR            the MiniLM model directory (`make minilm-dir` prints it)
local parsers = import 'parsers.libsonnet';
local model_name = std.extVar('MINILM_DIR');
local deps = std.extVar('DEPS_DIR');

parsers.cpu_training(
  std.extVar('TRAIN_PATH'),
  std.extVar('DEV_PATH'),
  parsers.ptb_reader(model_name, max_length=100, dependencies_dir=deps),
  parsers.ptb_reader(model_name, dependencies_dir=deps),
  parsers.joint_parser(
    parsers.transformer_embedder(model_name, last_layer_only=false, layers=4, precision='auto'),
    parsers.lal_stack(384, d_model=256, layers=0, heads=8, d_kv=32, label_heads=112,
                      lal_d_kv=32, d_proj=16),
    span_hidden_dim=250,
    dropout=0.2,
    span_weight=0.5,
    arc_dim=256,
    label_dim=64,
    span_loss='crf',
  ) + {
    encoder+: { label_attention+: { d_ff: 512 } },
    evalb_gold_tags: true,
    pos_tag_input: 'both',
    pos_tag_hidden_dim: 250,
    pos_tag_loss_weight: 20,
    dependency_loss_weight: 10,
    dependency_input: 'both',
  },
  batch_size=16,
  epochs=50,
  minutes=14.5,
  transformer_lr=3e-4,
  frozen_layers=1,
)
