// Stack-based multi-layer attention parser (Zhang et al. 2017, section 4.1) on PTB Stanford
// dependencies, the paper's setting: 300-d GloVe words (fine-tuned), 32-d POS and transition
// embeddings, a 3-layer bidirectional GRU encoder and a 3-layer GRU decoder of 500 units, 3
// attention layers with both stack vectors, dropout 0.2, batches of 64, beam 8 at test. The
// paper trains with SGD without giving its rate; this config uses Adam.
//   DEP_TRAIN   CoNLL-X file of PTB-SD sections 02-21
//   DEP_DEV     CoNLL-X file of section 22
//   GLOVE_PATH  GloVe vectors (e.g. glove.840B.300d.txt), or '' to train the words from scratch
//   CUDA_DEVICE GPU index, or -1 for the CPU
local parsers = import 'parsers.libsonnet';
local glove = std.extVar('GLOVE_PATH');

parsers.dependency_training(
  std.extVar('DEP_TRAIN'),
  std.extVar('DEP_DEV'),
  parsers.stack_attention_parser(pretrained_file=if glove == '' then null else glove),
  batch_size=64,
  lr=1e-3,
  epochs=100,
  cuda_device=std.parseInt(std.extVar('CUDA_DEVICE')),
)
