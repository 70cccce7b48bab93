#!/usr/bin/env bash
# Packs what the GPU benchmarks need on a machine that has Python 3.12, torch, numpy and numba
# but no package index and no model files (the GPU machines lent here): allennlp 2.10.1, the
# transformers stack and SuPar 1.1.4 with what they import, as one pruned archive of cp312
# packages; the WordPiece vocabulary; the PTB sample's trees and dependencies; SuPar's
# one-tree-per-line copy of them. Run here, from the repository root; the bundle folder is
# ignored by git (it holds treebank copies: never commit it) and is carried to the GPU machine,
# where `benchmarks/gpu_run.sh` unpacks it.
#
#   bash benchmarks/gpu_bundle.sh [BUNDLE_DIR (default .gpu_bundle)]
#
# Versions are the ones `make install` puts in .venv (the README's), for CPython 3.12 manylinux.
# The archive leaves out what nothing here imports and is large: compiled sources and debug
# symbols, test folders, and botocore's service descriptions other than S3's (cached-path
# imports boto3; nothing here reaches S3).
set -euo pipefail
bundle=${1:-.gpu_bundle}
shared=${SHARED:-../shared}
python=${PYTHON:-.venv/bin/python}
packages=(
  allennlp==2.10.1 transformers==4.57.6 huggingface-hub==0.36.2 tokenizers==0.22.2
  cached-path==1.8.10 boto3==1.44.5 botocore==1.44.5 s3transfer jmespath
  google-cloud-storage==3.17.1 google-auth==2.62.2 google-api-core==2.44.0
  google-cloud-core==2.8.0 google-crc32c==1.9.0 google-resumable-media==2.11.0
  googleapis-common-protos==1.76.0 proto-plus pyasn1 pyasn1-modules rsa cachetools
  spacy==3.8.18 thinc==8.3.14 blis==1.3.4 srsly==2.5.6 cymem==2.0.16 preshed==3.0.15
  murmurhash==1.0.16 catalogue==2.0.10 wasabi==1.1.3 confection==1.3.4 weasel==1.0.1
  spacy-legacy==3.0.12 spacy-loggers==1.0.5 smart-open==9.0.2 langcodes language-data
  marisa-trie cloudpathlib nltk==3.9.3 jsonnet==0.22.0 lmdb==3.0.0 base58==2.1.1 dill==0.4.1
  more-itertools==11.2.1 termcolor==3.3.0 tensorboardX==2.6.5
  supar==1.1.4 stanza==1.15.0 emoji udtools orjson
  pydantic==2.14.3 pydantic-core==2.50.4 annotated-types typing-inspection
  cryptography==50.0.2 cffi==2.1.1 pycparser opentelemetry-api pysocks importlib-metadata
  defusedxml
)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/wheels" "$work/site" "$bundle"
for package in "${packages[@]}"; do
  "$python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_34_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$work/wheels" "$package"
done
# fairscale 0.4.13 (allennlp imports it) is published as a source archive only: pure Python
"$python" -m pip wheel -q --no-deps --no-build-isolation fairscale==0.4.13 -w "$work/wheels"
for wheel in "$work"/wheels/*.whl; do unzip -q -o "$wheel" -d "$work/site"; done
(
  cd "$work/site"
  find . -type d \( -name tests -o -name test \) -prune -exec rm -rf {} +
  find . \( -name '*.pyx' -o -name '*.pxd' -o -name '*.c' -o -name '*.cpp' \) -delete
  find botocore/data -mindepth 1 -maxdepth 1 -type d ! -name s3 ! -name sts -exec rm -rf {} +
  find . -name '*.so' -exec strip --strip-debug {} +
)
tar cJf "$bundle/site.tar.xz" -C "$work/site" .
# The WordPiece vocabulary (the MiniLM model's, BERT-uncased's) without the model's weights.
minilm=$(make -s minilm-dir)
mkdir -p "$bundle/tokenizer"
for name in vocab.txt tokenizer.json tokenizer_config.json special_tokens_map.json; do
  [ -f "$minilm/$name" ] && cp "$minilm/$name" "$bundle/tokenizer/"
done
rm -rf "$bundle/ptb" && mkdir -p "$bundle/ptb"
cp -r "$shared/data/ptb-sample/trees" "$shared/data/ptb-sample/deps" "$bundle/ptb/"
"$python" - "$bundle" <<'PY'
import os, sys
sys.path.insert(0, "benchmarks")
from peers_accuracy import write_data

bundle = sys.argv[1]
data = write_data(os.path.join(bundle, "ptb", "trees", "wsj_0001-0199"),
                  os.path.join(bundle, "ptb", "trees", "wsj_0160-0179"),
                  os.path.join(bundle, "supar"), None)
print(f"{data['train_count']} SuPar training trees in {data['train']}")
PY
du -sh "$bundle"
