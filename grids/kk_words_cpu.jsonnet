// Kitaev & Klein 2018, sec. 5, Table 3 (word representations) at CPU scale, beside the MiniLM
// input: the same factored encoder, span parser and budget over word embeddings learned from
// scratch with POS tag embeddings (the paper's base input; gold tags here), alone, with a
// CharLSTM or with CharConcat (`training_config/kk_factored_words*_cpu.jsonnet`).
local kk = import 'kk_cpu.libsonnet';
local config(name) = '../training_config/kk_factored_' + name + '_cpu.jsonnet';
kk {
  name: 'kk_words_cpu',
  reference_variant: 'MiniLM',
  variants: [
    { name: 'MiniLM' },
    { name: 'words + POS', config: config('words_pos') },
    { name: 'words only', config: config('words') },
    { name: 'words + CharLSTM', config: config('words_charlstm') },
    { name: 'words + CharConcat', config: config('words_charconcat') },
  ],
}
