#!/usr/bin/env bash
# The GPU benchmarks of the joint LAL parser and of SuPar's CRF parser, on a GPU machine with
# Python 3.12, torch, numpy and numba, from the repository root, with the folder that
# `benchmarks/gpu_bundle.sh` made (BUNDLE, default .gpu_bundle). Results and logs go to
# OUT (default gpu_out). The benchmarks page gives the figures and the machine.
#
#   BUNDLE=.gpu_bundle OUT=gpu_out bash benchmarks/gpu_run.sh [gpu_speed.py options...]
set -uo pipefail
bundle=${BUNDLE:-.gpu_bundle}
out=${OUT:-gpu_out}
mkdir -p "$out" /tmp/lal_site
tar xJf "$bundle/site.tar.xz" -C /tmp/lal_site || exit 1
export PYTHONPATH=/tmp/lal_site:$PWD HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/gpu.txt"
nproc | tee -a "$out/gpu.txt"
python3 -c "import lal_allennlp, allennlp, transformers, numba, supar; print('imports ok',
  transformers.__version__, numba.__version__)" 2>&1 | tee -a "$out/gpu.txt" || exit 1
data=$bundle/ptb/trees/wsj_0001-0199
python3 benchmarks/gpu_speed.py "$data" --deps "$bundle/ptb/deps" \
  --config training_config/lal_xlnet_ptb_joint.jsonnet --tokenizer-dir "$bundle/tokenizer" \
  --precision fp32 fp16 bf16 --train-batches 37 --parse-batches 37 \
  --parse-batch-sizes 100 400 --stages --output "$out/gpu_speed.json" "$@" \
  2>&1 | grep -v "it/s\]" | tee "$out/gpu_speed.log"
python3 benchmarks/supar_gpu_speed.py "$bundle/supar/data/train.trees" \
  --tokenizer-dir "$bundle/tokenizer" --batch-words 2400 --autocast-parse bf16 \
  --output "$out/supar_gpu_speed.json" 2>&1 | grep -v "it/s\]" | tee "$out/supar_gpu_speed.log"
