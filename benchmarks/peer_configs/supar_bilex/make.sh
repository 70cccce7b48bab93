#!/usr/bin/env bash
# Makes the ``supar_bilex`` overlay that `benchmarks/decoder_side_by_side.py --supar-bilex-path`
# puts on the SuPar worker's path: SuPar master's BiLexicalizedConstituencyCRF (the exact O(n^4)
# joint span decoder, in no PyPI release) over PyPI's supar 1.1.4, for machines that cannot
# install SuPar's master from GitHub.
#
#   make.sh PARSER_CHECKOUT [OUT]   copy the class (supar/structs/tree.py) and the two helpers
#                                   1.1.4 lacks (diagonal_stripe, expanded_stripe from
#                                   supar/utils/fn.py) verbatim, by the AST, from a checkout or
#                                   unpacked archive of yzhangcs/parser at 7c0f2fab into
#                                   OUT/supar_bilex/__init__.py, then check it
#   make.sh - [OUT]                 only check an overlay already in OUT
#
# The rest (StructuredDistribution, LogSemiring, stripe) is imported from 1.1.4, whose versions
# behave as master's for this class: 1.1.4's stripe names its 5th parameter `dim` where master
# says `horizontal`, and master's calls pass False, a vertical stripe in both.
# The check: the overlay imports, and on tiny random batches (4 to 7 words) its argmax tree is a
# valid tree whose score is the brute-force maximum over all trees (verify.py, seconds).
# Env: SUPAR_PYTHON (default ../peers/supar-venv/bin/python beside the repository: a venv with
# `pip install torch==2.13.0 supar==1.1.4`). OUT defaults to ../peers/supar-bilex.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PEERS="$(cd "$HERE/../../../.." && pwd)/peers"
PY="${SUPAR_PYTHON:-$PEERS/supar-venv/bin/python}"
if [[ $# -lt 1 ]]; then
    sed -n '2,21p' "$0"
    exit 2
fi
SRC="$1"
OUT="${2:-$PEERS/supar-bilex}"

if [[ "$SRC" != "-" ]]; then
    mkdir -p "$OUT/supar_bilex"
    "$PY" - "$SRC" "$OUT/supar_bilex/__init__.py" <<'PYEOF'
import ast, sys
src, out = sys.argv[1], sys.argv[2]

def segments(path, names):
    text = open(path).read()
    tree = ast.parse(text)
    found = {n.name: ast.get_source_segment(text, n) for n in tree.body
             if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in names}
    missing = set(names) - set(found)
    if missing:
        sys.exit(f"{path}: missing {sorted(missing)}")
    return [found[n] for n in names]

helpers = segments(f"{src}/supar/utils/fn.py", ["diagonal_stripe", "expanded_stripe"])
(cls,) = segments(f"{src}/supar/structs/tree.py", ["BiLexicalizedConstituencyCRF"])
header = '''# -*- coding: utf-8 -*-
"""SuPar master's ``BiLexicalizedConstituencyCRF`` over PyPI's supar 1.1.4 (made by recreate.sh).

The class is from SuPar master's supar/structs/tree.py (commit
7c0f2fabe9891123a230d80480925768fa103cb2 of https://github.com/yzhangcs/parser, MIT License,
Copyright (c) Yu Zhang), ``diagonal_stripe`` and ``expanded_stripe`` from its supar/utils/fn.py;
the rest is imported from supar 1.1.4.
"""

from typing import Tuple

import torch
from supar.structs.dist import StructuredDistribution
from supar.structs.semiring import LogSemiring
from supar.utils.fn import stripe
from torch.distributions.utils import lazy_property

__all__ = ['BiLexicalizedConstituencyCRF', 'diagonal_stripe', 'expanded_stripe']

SUPAR_COMMIT = '7c0f2fabe9891123a230d80480925768fa103cb2'
'''
with open(out, "w") as f:
    f.write(header + "\n\n" + "\n\n\n".join(helpers + [cls]) + "\n")
print("wrote", out)
PYEOF
fi

# check: importable over 1.1.4, and exact against brute force on tiny random batches
PYTHONPATH="$OUT" "$PY" -c "import supar, supar_bilex; print('supar', supar.__version__, 'ok')"
PYTHONPATH="$OUT" "$PY" "$HERE/verify.py" | tail -1
