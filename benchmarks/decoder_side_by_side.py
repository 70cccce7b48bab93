"""
Chart decoders side by side: our numba CKY against benepar 0.2's batched decoder (torch-struct)
and SuPar's CKY, and our joint span decoder against SuPar's bilexicalized one, on identical
random charts, in one run.

The charts are seeded float32 span-label scores of shape (batch, n + 1, n + 1, labels), every
sentence of the batch n words long, label 0 (the empty label) scoring 0 everywhere, as in
benepar's and Kitaev & Klein's models (benepar subtracts the empty label's score itself; with it
at 0 the three decoders solve the same problem: the binary tree maximising the sum of its spans'
best label scores). Each chart is saved once as ``.npy``; each decoder runs in a worker process
(``benchmarks/decoder_worker.py``) under the Python of its own virtual environment, with the same
number of threads, loads the same file, converts it untimed to its native layout, is warmed up
once and timed over ``--repeats`` calls, or more until they took ``--min-time`` seconds
(the fastest call counts: the one least disturbed by other jobs). The driver then checks the
outputs: every decoder's tree must score, on the chart, what ours scores (float64 sums; trees may
differ only where two trees tie), and reports sentences/s, ours / peer speed ratios, the peak
resident memory added by the timed calls, and the growth exponent of time with length
(least-squares slope of log time over log n).

benepar's decoder is called with ``force_root_constituent=False`` (the root may be empty, as in
the others); SuPar's is timed as its CRF constituency model decodes: label max over the chart,
``CRFConstituencyModel.decode`` (CKY by ``ConstituencyCRF(...).argmax``) over the
maxima, labels of the chosen spans.

The joint span decoders (exact, O(n^4)) decode a binary tree whose every span has a head word
and the dependency heads together, on the same charts plus seeded random arc scores (saved as a
second ``.npy``), maximising ``lambda * (sum of the 2n - 1 spans' scores) + (1 - lambda) *
(sum of the n arcs' scores)``, lambda = 0.5: ours (Zhou & Zhao 2019, sec. 3.3) and SuPar's
``BiLexicalizedConstituencyCRF`` (Eisner-Satta; master, no span-head scores), whose span score
is the span's best label among those ours allows there (empty; ``<H>`` except on single words
and the whole sentence; the phrase labels). Ours keeps the empty label off dependents of more
than one word and off the sentence, so the two objectives are the same where every span has a
non-empty label scoring at least the empty label's 0, which the driver checks on the charts.
Both trees must be binary trees whose heads agree with the
spans (every span has one word headed from outside it, one child's head is the span's, the
other's depends on it), and SuPar's must score what ours scores. SuPar's joint decoder keeps its
charts and autograd graph in memory, some 25 MB per sentence at 40 words and 150 MB at 80 (at
least n^3), and takes O(n^4) time, so it decodes only the first sentences of the batch at long
lengths (``--supar-joint-batch``).

    python benchmarks/decoder_side_by_side.py [--lengths 10 20 40 80 160] [--threads 1 2] \
        [--benepar-python /work/peers/benepar-venv/bin/python] \
        [--supar-python /work/peers/supar-venv/bin/python] \
        [--supar-bilex-path /work/peers/supar-bilex] [--supar-joint-batch 80=20 160=2] \
        [--out benchmarks/decoders.md]

Peer environments: ``python3 -m venv DIR && DIR/bin/pip install torch==2.13.0 benepar`` (or
``supar``); pin torch, or pip fetches a multi-GB CUDA build. ``BiLexicalizedConstituencyCRF`` is
in no SuPar release on PyPI (1.1.4 is the last): where GitHub is reachable, install SuPar's
master into the SuPar venv, ``DIR/bin/pip install
git+https://github.com/yzhangcs/parser@7c0f2fabe9891123a230d80480925768fa103cb2``; otherwise make
the ``supar_bilex`` overlay (the class and the two helpers it needs, over the installed 1.1.4) with
``benchmarks/peer_configs/supar_bilex/make.sh`` from a copy of that commit, and give its
directory as ``--supar-bilex-path`` (the default, when it exists), which the SuPar worker gets
on ``PYTHONPATH``.
"""

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timing import growth_exponent, load_average  # noqa: E402  (benchmarks/timing.py)

WORKER = os.path.join(HERE, "decoder_worker.py")
DEFAULT_PEERS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "peers")
NAMES = {
    "ours": "ours (numba CKY)",
    "ours-joint": "ours (numba joint span)",
    "benepar": "benepar 0.2 (torch-struct)",
    "supar": "SuPar CKY",
    "supar-joint": "SuPar joint span (BiLexicalizedConstituencyCRF)",
}
# The joint span decoders (they also decode dependency heads): ours, and SuPar's checked
# against it.
JOINT, SUPAR_JOINT = "ours-joint", "supar-joint"
JOINTS = (JOINT, SUPAR_JOINT)
SPAN_WEIGHT = 0.5  # lambda of the joint objective (Zhou & Zhao's and our configs' default)
EMPTY, SUB_HEAD = 0, 1  # label ids of the empty label and of the joint span decoder's <H>
TOLERANCE = 1e-4  # relative difference of two tree scores still counted as equal


def make_charts(length: int, batch: int, labels: int, seed: int) -> np.ndarray:
    """Seeded float32 charts, shape (batch, length + 1, length + 1, labels), label 0 scoring 0."""
    rng = np.random.default_rng([seed, length])
    scores = rng.standard_normal((batch, length + 1, length + 1, labels), dtype=np.float32)
    scores[..., 0] = 0.0
    return scores


def make_arcs(length: int, batch: int, seed: int) -> np.ndarray:
    """Seeded float32 arc scores of the joint span decoders, shape (batch, length + 1,
    length + 1): ``[b, h, d]`` scores head h -> word d, h = 0 the root (column 0 and the diagonal
    are never read)."""
    rng = np.random.default_rng([seed, length, 1])
    return rng.standard_normal((batch, length + 1, length + 1), dtype=np.float32)


def tree_score(scores: np.ndarray, spans: Sequence[Sequence[int]]) -> float:
    """Sum, in float64, of the chart scores of labelled spans ``(i, j, label)`` of one sentence."""
    return float(sum(float(scores[i, j, label]) for i, j, label in spans))


def _sub_head_allowed(length: int) -> np.ndarray:
    """(length + 1, length + 1) bools: where the joint decoders allow ``<H>`` (not on single
    words, not on the whole sentence)."""
    allowed = np.ones((length + 1, length + 1), dtype=bool)
    allowed[range(length), range(1, length + 1)] = False
    allowed[0, length] = False
    return allowed


def _best_non_empty(scores: np.ndarray) -> np.ndarray:
    """The best non-empty label score that the joint decoders allow on each span of one
    sentence's chart (n + 1, n + 1, labels)."""
    best = scores[..., SUB_HEAD + 1 :].max(-1)
    with_sub_head = np.maximum(best, scores[..., SUB_HEAD])
    return np.where(_sub_head_allowed(scores.shape[0] - 1), with_sub_head, best)


def joint_span_values(scores: np.ndarray) -> np.ndarray:
    """float64 (n + 1, n + 1): the value of each span of one sentence's chart in the joint
    objective, its best allowed label (the empty one included)."""
    return np.maximum(_best_non_empty(scores), scores[..., EMPTY]).astype(np.float64)


def joint_objective_problem(scores: np.ndarray) -> Optional[str]:
    """None if the joint decoders optimise the same objective on this sentence's chart: every
    span has an allowed non-empty label scoring at least the empty label (ours keeps longer
    dependents and the sentence non-empty; SuPar's span score cannot depend on the role)."""
    best = _best_non_empty(scores)
    below = np.argwhere(np.triu(best < scores[..., EMPTY], 1))
    if len(below) == 0:
        return None
    i, j = below[0]
    return (
        f"span ({i}, {j}) scores its non-empty labels below the empty one, where the joint "
        "objectives differ (use more labels)"
    )


def joint_tree_score(
    values: np.ndarray,
    arcs: np.ndarray,
    spans: Sequence[Sequence[int]],
    heads: Sequence[int],
    span_weight: float = SPAN_WEIGHT,
) -> float:
    """The joint objective of one tree, in float64: ``span_weight`` times the values
    (``joint_span_values``) of its nodes ``(i, j, label)`` plus ``1 - span_weight`` times the
    scores ``arcs[h, d]`` of its arcs (``heads[d - 1] = h``)."""
    span_part = sum(float(values[i, j]) for i, j, _ in spans)
    arc_part = sum(float(arcs[h, d]) for d, h in enumerate(heads, 1))
    return span_weight * span_part + (1.0 - span_weight) * arc_part


def check_tree(spans: Sequence[Sequence[int]], length: int) -> Optional[str]:
    """None if the spans are distinct, inside [0, length] and pairwise nested or disjoint."""
    seen = set()
    for i, j, _ in spans:
        if not 0 <= i < j <= length:
            return f"span ({i}, {j}) outside the sentence of {length} words"
        if (i, j) in seen:
            return f"span ({i}, {j}) twice"
        seen.add((i, j))
    ordered = sorted(seen, key=lambda s: (s[0], -s[1]))
    stack: List[tuple] = []
    for i, j in ordered:
        while stack and stack[-1][1] <= i:
            stack.pop()
        if stack and j > stack[-1][1]:
            return f"spans {stack[-1]} and ({i}, {j}) cross"
        stack.append((i, j))
    return None


def check_joint_tree(
    spans: Sequence[Sequence[int]], heads: Sequence[int], length: int
) -> Optional[str]:
    """None if the nodes ``(i, j, label)`` form a binary tree over the words and the heads
    (``heads[d - 1]``, 0 = root) a dependency tree that agrees with it: every node has one word
    headed from outside it (its head), and of the two children of a node one has the node's
    head and the other's head depends on it. (Every node having one outside-headed word, and
    the sentence's being headed by the root, also rules out cycles.)"""
    problem = check_tree(spans, length)
    if problem:
        return problem
    nodes = {(i, j) for i, j, _ in spans}
    words = {(w - 1, w) for w in range(1, length + 1)}
    # Nested, distinct, with the sentence and every word: a binary tree iff 2n - 1 nodes.
    if len(nodes) != 2 * length - 1 or (0, length) not in nodes or not words <= nodes:
        return f"{len(nodes)} nodes, not a binary tree over the {length} words"
    if len(heads) != length or any(not 0 <= h <= length or h == d for d, h in enumerate(heads, 1)):
        return f"heads {list(heads)} are not {length} heads in [0, {length}] of other words"
    head_of = {}
    for i, j in nodes:
        outside = [d for d in range(i + 1, j + 1) if not i < heads[d - 1] <= j]
        if len(outside) != 1:
            return f"span ({i}, {j}) has {len(outside)} words headed from outside it"
        head_of[(i, j)] = outside[0]
    for i, j in nodes:
        if j - i == 1:
            continue
        k = next(k for k in range(i + 1, j) if (i, k) in nodes and (k, j) in nodes)
        left, right, head = head_of[(i, k)], head_of[(k, j)], head_of[(i, j)]
        dependent = right if head == left else left
        if head not in (left, right) or heads[dependent - 1] != head:
            return f"the heads of ({i}, {k}) and ({k}, {j}) are not head and dependent"
    return None


def check_joint_labels(scores: np.ndarray, spans: Sequence[Sequence[int]]) -> Optional[str]:
    """None if every node ``(i, j, label)`` of a joint tree has a label that the joint decoders
    allow there and that scores the span's joint value (where ``joint_objective_problem`` finds
    nothing: otherwise ours may take a non-empty label below the empty one)."""
    allowed = _sub_head_allowed(scores.shape[0] - 1)
    values = joint_span_values(scores)
    for i, j, label in spans:
        if label == SUB_HEAD and not allowed[i, j]:
            return f"<H> on span ({i}, {j})"
        if float(scores[i, j, label]) != values[i, j]:
            return f"span ({i}, {j}) labelled {label}, not a best label"
    return None


def compare_scores(
    reference: Sequence[float], scores: Sequence[float], same_tree: Sequence[bool]
) -> Tuple[List[int], int]:
    """(sentences whose score differs from the reference's by more than ``TOLERANCE``
    relative, ties: sentences of an equal score but another tree)."""
    different, ties = [], 0
    for b, (mine, theirs, same) in enumerate(zip(reference, scores, same_tree)):
        if abs(mine - theirs) > TOLERANCE * max(1.0, abs(mine)):
            different.append(b)
        elif not same:
            ties += 1
    return different, ties


def parse_batch_caps(pairs: Sequence[str]) -> Dict[int, int]:
    """``["80=20", "160=2"]`` -> ``{80: 20, 160: 2}``."""
    caps = {}
    for pair in pairs:
        length, _, batch = pair.partition("=")
        if not (length.isdigit() and batch.isdigit() and int(batch) > 0):
            raise ValueError(f"{pair!r} is not LENGTH=BATCH (two positive whole numbers)")
        caps[int(length)] = int(batch)
    return caps


def capped_batch(caps: Dict[int, int], length: int, batch: int) -> int:
    """The batch a decoder capped by ``caps`` gets at ``length``: the cap of the longest listed
    length up to ``length`` (none below the shortest), at most ``batch``."""
    listed = [n for n in caps if n <= length]
    return min(batch, caps[max(listed)]) if listed else batch


def run_worker(
    python: str,
    decoder: str,
    charts: str,
    repeats: int,
    min_time: float,
    threads: int,
    workdir: str,
    extra: Sequence[str] = (),
    python_path: Optional[str] = None,
) -> Dict:
    out = os.path.join(workdir, f"{decoder}.json")
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[var] = str(threads)
    env.pop("PYTHONPATH", None)
    if python_path:
        env["PYTHONPATH"] = python_path
    env["PYTHONWARNINGS"] = "ignore::UserWarning"  # torch-struct's distribution warnings
    command = [python, WORKER, decoder, charts, out, "--repeats", str(repeats)]
    command += ["--threads", str(threads), "--min-time", str(min_time), *extra]
    subprocess.run(command, check=True, env=env)
    with open(out) as result:
        return json.load(result)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 20, 40, 80, 160])
    parser.add_argument("--labels", type=int, default=112)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--min-time", type=float, default=2.0)
    parser.add_argument("--threads", type=int, nargs="+", default=[1])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--decoders",
        nargs="+",
        choices=list(NAMES),
        default=["ours", "benepar", "supar", JOINT, SUPAR_JOINT],
    )
    parser.add_argument("--python", default=sys.executable, help="Python that runs ours")
    parser.add_argument(
        "--benepar-python", default=os.path.join(DEFAULT_PEERS, "benepar-venv", "bin", "python")
    )
    parser.add_argument(
        "--supar-python", default=os.path.join(DEFAULT_PEERS, "supar-venv", "bin", "python")
    )
    parser.add_argument(
        "--supar-bilex-path",
        help="directory of the supar_bilex overlay, put on the SuPar joint worker's PYTHONPATH "
        f"(default: {os.path.join(DEFAULT_PEERS, 'supar-bilex')} if it exists; without one, "
        "the SuPar venv must hold SuPar master)",
    )
    parser.add_argument(
        "--supar-joint-batch",
        nargs="*",
        default=["80=20", "160=2"],
        metavar="LENGTH=BATCH",
        help="SuPar's joint decoder decodes only the first BATCH sentences from LENGTH words on "
        "(its memory grows with the batch and at least n^3); no value: the whole batch",
    )
    parser.add_argument("--out", help="also write the Markdown report to this file")
    args = parser.parse_args()
    if args.decoders[0] != "ours":
        parser.error("--decoders must start with ours (the others are checked against it)")
    order = args.decoders
    late = JOINT not in order or SUPAR_JOINT in order[: order.index(JOINT)]
    if SUPAR_JOINT in order and late:
        parser.error(f"--decoders must name {JOINT} before {SUPAR_JOINT} (checked against it)")
    try:
        caps = parse_batch_caps(args.supar_joint_batch)
    except ValueError as error:
        parser.error(f"--supar-joint-batch: {error}")
    if args.supar_bilex_path is None:
        default = os.path.join(DEFAULT_PEERS, "supar-bilex")
        args.supar_bilex_path = default if os.path.isdir(default) else None
    elif not os.path.isdir(os.path.join(args.supar_bilex_path, "supar_bilex")):
        parser.error(f"--supar-bilex-path: no supar_bilex package in {args.supar_bilex_path}")
    pythons = {
        "ours": args.python,
        JOINT: args.python,
        "benepar": args.benepar_python,
        "supar": args.supar_python,
        SUPAR_JOINT: args.supar_python,
    }
    for decoder in args.decoders:
        if not os.path.exists(pythons[decoder]):
            parser.error(f"{pythons[decoder]} does not exist: make the {decoder} environment")

    # results[threads][length][decoder] = worker JSON (+ checks)
    results: Dict[int, Dict[int, Dict[str, Dict]]] = {t: {} for t in args.threads}
    problems: List[str] = []
    ties: Dict[str, int] = {d: 0 for d in args.decoders}
    with tempfile.TemporaryDirectory(prefix="decoders-") as workdir:
        for length in args.lengths:
            scores = make_charts(length, args.batch, args.labels, args.seed)
            charts = os.path.join(workdir, f"charts_{length}.npy")
            np.save(charts, scores)
            arcs = make_arcs(length, args.batch, args.seed)
            arcs_file = os.path.join(workdir, f"arcs_{length}.npy")
            np.save(arcs_file, arcs)
            joint = any(d in JOINTS for d in args.decoders)
            same_objective = [joint_objective_problem(s) if joint else None for s in scores]
            if SUPAR_JOINT in args.decoders:
                problems += [
                    f"n={length}, sentence {b}: {problem}"
                    for b, problem in enumerate(same_objective)
                    if problem
                ]
            for threads in args.threads:
                row: Dict[str, Dict] = {}
                for decoder in args.decoders:
                    print(f"n={length}, {threads} thread(s): {decoder}", file=sys.stderr)
                    sys.stderr.flush()
                    extra: List[str] = []
                    if decoder in JOINTS:
                        extra = ["--arcs", arcs_file, "--span-weight", str(SPAN_WEIGHT)]
                    if decoder == SUPAR_JOINT:
                        extra += ["--sentences", str(capped_batch(caps, length, args.batch))]
                    result = run_worker(
                        pythons[decoder],
                        decoder,
                        charts,
                        args.repeats,
                        args.min_time,
                        threads,
                        workdir,
                        extra,
                        args.supar_bilex_path if decoder == SUPAR_JOINT else None,
                    )
                    spans = result.pop("spans")
                    for b, sentence_spans in enumerate(spans):
                        problem = check_tree(sentence_spans, length)
                        if problem:
                            problems.append(f"{decoder}, n={length}, sentence {b}: {problem}")
                    if decoder in JOINTS:
                        heads = result.pop("heads")
                        problems += _check_joint(
                            decoder, length, scores, arcs, spans, heads, same_objective, result
                        )
                        # trees: (unlabelled nodes, heads) of each sentence
                        trees = [(sorted((i, j) for i, j, _ in s), h) for s, h in zip(spans, heads)]
                        if decoder == JOINT:
                            result["trees"] = trees
                        else:
                            reference = row[JOINT]
                            batch = len(trees)
                            different, found = compare_scores(
                                reference["scores"][:batch],
                                result["scores"],
                                [t == r for t, r in zip(trees, reference["trees"])],
                            )
                            ties[decoder] += found
                            problems += _mismatches(decoder, length, different, reference, result)
                    else:
                        result["scores"] = [tree_score(scores[b], s) for b, s in enumerate(spans)]
                        trees = [sorted(map(tuple, s)) for s in spans]
                        if decoder == "ours":
                            result["trees"] = trees
                        else:
                            reference = row["ours"]
                            different, found = compare_scores(
                                reference["scores"],
                                result["scores"],
                                [t == r for t, r in zip(trees, reference["trees"])],
                            )
                            ties[decoder] += found
                            problems += _mismatches(decoder, length, different, reference, result)
                    row[decoder] = result
                for result in row.values():
                    result.pop("trees", None)
                results[threads][length] = row
            os.remove(charts)
            os.remove(arcs_file)
            del scores, arcs

    report = format_report(args, caps, results, problems, ties)
    print(report)
    if args.out:
        with open(args.out, "w") as out:
            out.write(report)
    if problems:
        sys.exit(1)


def _check_joint(
    decoder: str,
    length: int,
    scores: np.ndarray,
    arcs: np.ndarray,
    spans: List,
    heads: List,
    same_objective: List[Optional[str]],
    result: Dict,
) -> List[str]:
    """Checks the joint trees of one worker's result and stores their joint scores in it."""
    problems, result["scores"] = [], []
    for b, (sentence_spans, sentence_heads) in enumerate(zip(spans, heads)):
        problem = check_joint_tree(sentence_spans, sentence_heads, length)
        if problem is None and same_objective[b] is None:
            problem = check_joint_labels(scores[b], sentence_spans)
        if problem:
            problems.append(f"{decoder}, n={length}, sentence {b}: {problem}")
        values = joint_span_values(scores[b])
        result["scores"].append(joint_tree_score(values, arcs[b], sentence_spans, sentence_heads))
    return problems


def _mismatches(
    decoder: str, length: int, different: List[int], reference: Dict, result: Dict
) -> List[str]:
    return [
        f"{decoder}, n={length}, sentence {b}: tree score {result['scores'][b]:.6f} != "
        f"{reference['decoder']}'s {reference['scores'][b]:.6f}"
        for b in different
    ]


def format_report(args, caps, results, problems: List[str], ties: Dict[str, int]) -> str:
    def rate(result: Dict) -> float:
        return result["batch"] / min(result["times"])

    def peak_mib(result: Dict) -> str:
        if not result["peak_reset"]:
            return "n/a"
        return f"{max(0, result['peak_kib'] - result['rss_before_kib']) / 1024:,.0f}"

    def ratio(value: float) -> str:
        return f"{value:,.0f}x" if value >= 10 else f"{value:.2f}x"

    decoders = args.decoders
    peers = [d for d in decoders if d not in ("ours",) + JOINTS]  # the CKY peers
    joint_ratios = peers if JOINT in decoders else []  # ours joint / each CKY peer
    against_supar = JOINT in decoders and SUPAR_JOINT in decoders
    joint_over_cky = JOINT in decoders  # ours joint time / ours CKY time
    lines = [
        "# Chart decoders side by side",
        "",
        f"{datetime.date.today().isoformat()}, {machine()}, load average "
        f"{load_average()} at the end.",
        "",
        "```bash",
        "python benchmarks/decoder_side_by_side.py " + " ".join(sys.argv[1:]),
        "```",
        "",
        f"Batch of {args.batch} sentences of n words, {args.labels} labels (label 0 empty, "
        f"scoring 0), float32, seed {args.seed}; the fastest of at least {args.repeats} timed "
        f"calls (more until they took {args.min_time:g} s) after one warm-up (the least "
        "disturbed by other jobs on a shared machine), each decoder in its own process. Peak "
        "memory: the most resident memory the timed calls added (MiB) over the process before "
        "them (the chart itself, "
        f"{args.batch} x (n+1)^2 x {args.labels} x 4 bytes, is not counted; nor is what the "
        "warm-up call allocated and the process kept).",
        "",
    ]
    if SUPAR_JOINT in decoders:
        capped = [
            f"{capped_batch(caps, n, args.batch)} at n={n}"
            for n in args.lengths
            if capped_batch(caps, n, args.batch) < args.batch
        ]
        lines += [
            f"The joint span decoders: the same charts plus seeded random arc scores, lambda "
            f"{SPAN_WEIGHT:g}. SuPar's joint decoder is master's BiLexicalizedConstituencyCRF "
            "(in no PyPI release: `pip install git+https://github.com/yzhangcs/parser@"
            "7c0f2fabe9891123a230d80480925768fa103cb2` into the SuPar venv, or the overlay "
            "package that `--supar-bilex-path` names; here "
            + (
                f"the overlay {args.supar_bilex_path} over supar 1.1.4)"
                if args.supar_bilex_path
                else "SuPar master installed)"
            )
            + (
                "; it decodes the first sentences of the batch only: " + ", ".join(capped) + "."
                if capped
                else "."
            ),
            "",
        ]
    header = "| n | threads | " + " | ".join(f"{NAMES[d]} sent/s" for d in decoders)
    header += "".join(f" | ours / {d}" for d in peers)
    header += "".join(f" | ours joint / {d}" for d in joint_ratios)
    header += " | ours joint / SuPar joint" if against_supar else ""
    header += " | joint time / CKY time" if joint_over_cky else ""
    header += " | " + " | ".join(f"peak MiB {d}" for d in decoders) + " |"
    columns = 2 + 2 * len(decoders) + len(peers) + len(joint_ratios)
    columns += int(against_supar) + int(joint_over_cky)
    lines += [header, "|" + "---:|" * columns]
    for threads, by_length in results.items():
        for length, row in by_length.items():
            cells = [str(length), str(threads)]
            cells += [f"{rate(row[d]):,.0f}" if rate(row[d]) >= 10 else f"{rate(row[d]):.2f}"
                      for d in decoders]
            cells += [f"{rate(row['ours']) / rate(row[d]):,.0f}x" for d in peers]
            cells += [f"{rate(row[JOINT]) / rate(row[d]):,.1f}x" for d in joint_ratios]
            if against_supar:
                cells.append(ratio(rate(row[JOINT]) / rate(row[SUPAR_JOINT])))
            if joint_over_cky:
                cells.append(ratio(rate(row["ours"]) / rate(row[JOINT])))
            cells += [peak_mib(row[d]) for d in decoders]
            lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lengths = list(args.lengths)
    if len(lengths) >= 2:
        lines += [
            "Growth of time with length (exponent k of time per sentence ~ n^k; least squares "
            f"over all lengths, and between {lengths[-2]} and {lengths[-1]} words):",
            "",
            "| threads | " + " | ".join(NAMES[d] for d in decoders) + " |",
            "|---:|" + "---|" * len(decoders),
        ]
        for threads, by_length in results.items():
            cells = [str(threads)]
            for d in decoders:
                times = [1.0 / rate(by_length[n][d]) for n in lengths]
                last = math.log(times[-1] / times[-2]) / math.log(lengths[-1] / lengths[-2])
                cells.append(f"n^{growth_exponent(lengths, times):.2f} (n^{last:.2f})")
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    if problems:
        lines += ["**Check failed:**", ""] + [f"- {p}" for p in problems[:20]] + [""]
    else:
        decodes = {
            d: sum(row[d]["batch"] for by_length in results.values() for row in by_length.values())
            for d in decoders
        }
        checked = ", ".join(f"{d} {decodes[d]}" for d in decoders)
        text = (
            f"Check ({checked} sentence decodes): every tree is well formed and (the CKY "
            "decoders) scores on the chart what ours scores (to 1e-4 relative)"
        )
        if JOINT in decoders:
            text += (
                "; the joint span trees are binary trees whose heads agree with the spans, "
                "labelled with best labels"
            )
            if SUPAR_JOINT in decoders:
                text += ", and SuPar's scores the joint objective as ours does (to 1e-4 relative)"
        text += "; trees that differ from ours (SuPar joint: from ours joint) with the same "
        text += "score (ties): "
        text += ", ".join(f"{d} {ties[d]}" for d in decoders if d not in ("ours", JOINT)) + "."
        lines += [text, ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
