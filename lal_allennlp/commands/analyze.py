"""
`lal-analyze`: analyses of a trained parser over a whole treebank.

    lal-analyze heads MODEL TREEBANK -o DIR [--measure average|softmax|both] [--min-count 20]
    lal-analyze errors MODEL TREEBANK -o DIR [--top 15]
    lal-analyze errors --predictions FILE.jsonl -o DIR [--top 15]
    lal-analyze calibrate MODEL HELD_OUT -o DIR [--report TREEBANK] [--bins 10]
    lal-analyze ensemble MODEL MODEL ... -o ENSEMBLE.tar.gz [--beam-size K]

- `heads`: which label attention heads contribute to which syntactic categories (Mrini et al.
  2020, sec. 2, Figure 6 and sec. 5): the mean contributions of each head to the correctly
  predicted constituents of each label, parsing the gold words with the gold POS tags. Writes
  `head_label.csv`, `head_label.png` and `head_label.md` into DIR (with `--measure both` the
  CSV and PNG of each measure: `head_label_average.csv`, `head_label_softmax.csv`, ...); see
  `lal_allennlp/analysis/head_label.py`. The model must be a `lal_span_parser` with a label
  attention layer (else a message and exit status 1); a model whose label attention layer has
  the position-wise feed-forward layer gets a warning: its contributions are approximate.
- `errors`: labelled F1 by label, by span length and by sentence length, label confusions,
  missing and extra brackets, and for joint models UAS/LAS by label, tag and head distance and
  the most frequent wrong heads (`lal_allennlp/analysis/errors.py`). From a model and a
  treebank (the predictions are also written to DIR/predictions.jsonl, for a later
  `--predictions`), or from a predictions file of `lal_allennlp.analysis.predictions`. Writes
  `errors.md`, `errors.json`, `errors_span_length.png`, `errors_sentence_length.png` and
  `errors_labels.png`.

- `calibrate`: temperature scaling of the confidences of a parser trained as a tree CRF
  (`lal_allennlp/analysis/calibration.py`): fitted on HELD_OUT, written into `DIR/model.tar.gz`
  (the archive with `confidence_temperatures` in its config); with `--report`, ECE, accuracy and
  the ranking of sentences by `sentence_confidence` before and after, on other trees
  (`DIR/calibration.json`, `DIR/reliability.png`).

- `ensemble`: one model archive holding the ensemble of trained `stack_attention_parser`
  archives (`lal_allennlp/models/stack_attention_ensemble.py`), which decodes with the members'
  averaged transition probabilities; it loads, predicts and evaluates like any model archive.
  The members must share one vocabulary and dataset reader (the same training data and
  config, different seeds); `--beam-size` sets the ensemble's beam (default: the first
  member's).

TREEBANK is any path the model's dataset reader reads: a file, a folder, a glob, a WSJ range
such as `DIR/wsj_0160-0179`, optionally with a tree selection `[:N]`.

Exit status: 0 on success; 1 when the model cannot do the analysis (`heads` on a model without
label attention, `ensemble` of models that cannot be ensembled); 2 for a usage error or an input
that is missing or cannot be read (the message names the file).
"""
import argparse
import os
import sys
import tarfile
from typing import Any, List, Optional, Sequence

_PROG = "lal-analyze"
_MEASURES = {"average": ("average",), "softmax": ("softmax",), "both": ("average", "softmax")}


def _fail(message: str) -> int:
    print(f"{_PROG}: {message}", file=sys.stderr)
    return 2


def _read_instances(reader: Any, treebank: str) -> List[Any]:
    """The instances of `treebank`; `ValueError` naming the path if it cannot be read."""
    from allennlp.common.checks import ConfigurationError

    from lal_allennlp.syntax.trees import TreebankFormatError

    try:
        instances = list(reader.read(treebank))
    except (OSError, UnicodeDecodeError, TreebankFormatError, ConfigurationError) as error:
        problem = " ".join(str(error).split())
        raise ValueError(f"cannot read the treebank {treebank}: {problem}") from error
    if not instances:
        raise ValueError(f"the treebank {treebank} holds no tree the model's reader reads")
    return instances


def _progress_bar(total: int, show: bool, description: str) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, unit=" sentences", desc=description, disable=not show)


def heads(args: argparse.Namespace, cli: argparse.ArgumentParser) -> int:
    from lal_allennlp.analysis.head_label import (
        explainable_layer,
        head_label_analysis,
        write_head_label_outputs,
    )
    from lal_allennlp.api import Parser
    from lal_allennlp.models.explanations import contributions_are_exact

    if args.min_count < 1:
        cli.error("--min-count must be at least 1")
    try:
        parser = Parser.load(args.archive, cuda_device=args.cuda_device, max_words=None)
    except (FileNotFoundError, ValueError) as error:
        cli.error(str(error))
    model = parser.model
    try:
        # The joint parser gives no per-sentence explanations through the predictor, but its
        # span vectors are built per head as the span parser's are: it is analysed the same way.
        layer = explainable_layer(model)
    except ValueError as error:
        print(
            f"{args.archive} cannot be analysed by head: {error}. lal-analyze heads needs a span or joint "
            "parser with a label attention layer in its encoder.",
            file=sys.stderr,
        )
        return 1
    if not contributions_are_exact(layer):
        print(
            f"{_PROG}: warning: the label attention layer of {args.archive} has a position-wise "
            "feed-forward layer (PFL), which mixes the heads: the contributions are only an "
            "approximation (they are exact for models trained with use_feed_forward: false)",
            file=sys.stderr,
        )
    try:
        instances = _read_instances(parser.predictor._dataset_reader, args.treebank)
    except ValueError as error:
        return _fail(str(error))
    measures = _MEASURES[args.measure]
    with _progress_bar(len(instances), not args.no_progress, "Parsing") as bar:
        analysis = head_label_analysis(
            model, instances, measures, batch_size=args.batch_size, progress=bar.update
        )
    for failure in analysis.failures:
        print(f"{_PROG}: not parsed: {failure}", file=sys.stderr)
    source = f"Model `{args.archive}`, treebank `{args.treebank}`."
    for path in write_head_label_outputs(analysis, args.output, args.min_count, source):
        print(f"wrote {path}", file=sys.stderr)
    return 0


def errors(args: argparse.Namespace, cli: argparse.ArgumentParser) -> int:
    from lal_allennlp.analysis.errors import analyze_predictions

    if args.top < 1:
        cli.error("--top must be at least 1")
    if args.predictions is not None and (args.archive or args.treebank):
        cli.error("give either MODEL TREEBANK or --predictions FILE, not both")
    if args.predictions is None and not (args.archive and args.treebank):
        cli.error("give MODEL TREEBANK, or --predictions FILE.jsonl")
    try:
        from lal_allennlp.analysis import predictions as predictions_module
    except ImportError as error:
        return _fail(f"lal_allennlp.analysis.predictions cannot be imported ({error})")

    if args.predictions is not None:
        if not os.path.isfile(args.predictions):
            return _fail(f"no predictions file at {args.predictions}")
        try:
            predictions = predictions_module.read_predictions(args.predictions)
        except (OSError, UnicodeDecodeError, ValueError) as error:
            return _fail(f"cannot read the predictions {args.predictions}: {error}")
        if not predictions:
            return _fail(f"the predictions file {args.predictions} holds no sentence")
        source = f"Predictions `{args.predictions}`."
    else:
        from allennlp.common.checks import ConfigurationError

        from lal_allennlp.syntax.trees import TreebankFormatError

        if not os.path.exists(args.archive):
            return _fail(f"no model archive at {args.archive}")
        try:
            predicted = predictions_module.predict_treebank(
                args.archive, args.treebank, batch_size=args.batch_size
            )
        except (
            OSError,
            UnicodeDecodeError,
            ValueError,
            TreebankFormatError,
            ConfigurationError,
            tarfile.TarError,
            EOFError,
        ) as error:
            problem = " ".join(str(error).split())
            return _fail(f"cannot predict {args.treebank} with {args.archive}: {problem}")
        # `predict_treebank` gives the predictions, or the predictions and the model's metrics.
        predictions = predicted[0] if isinstance(predicted, tuple) else predicted
        os.makedirs(args.output, exist_ok=True)
        written = os.path.join(args.output, "predictions.jsonl")
        try:
            predictions_module.write_predictions(written, predictions)
            print(f"wrote {written}", file=sys.stderr)
        except (OSError, TypeError, ValueError) as error:
            # The analysis does not need the file: say so and go on.
            print(f"{_PROG}: warning: could not write {written}: {error}", file=sys.stderr)
        source = f"Model `{args.archive}`, treebank `{args.treebank}`."
    try:
        analysis = analyze_predictions(predictions, top=args.top)
    except ValueError as error:
        return _fail(str(error))
    os.makedirs(args.output, exist_ok=True)
    report = os.path.join(args.output, "errors.md")
    markdown = analysis.to_markdown()
    with open(report, "w", encoding="utf-8") as out:
        title, rest = markdown.split("\n", 1)
        out.write(f"{title}\n\n{source}\n{rest}")
    summary = os.path.join(args.output, "errors.json")
    import json

    with open(summary, "w", encoding="utf-8") as out:
        json.dump(analysis.to_json(), out, indent=1, ensure_ascii=False)
        out.write("\n")
    for path in [report, summary] + analysis.write_plots(args.output):
        print(f"wrote {path}", file=sys.stderr)
    print(
        f"labelled F1 {100 * analysis.evalb.f1:.2f} over {analysis.evalb.valid_sentences} "
        "sentences",
        file=sys.stderr,
    )
    return 0


def calibrate(args: argparse.Namespace, cli: argparse.ArgumentParser) -> int:
    import json

    from allennlp.models.archival import load_archive

    from lal_allennlp.analysis import calibration

    if not os.path.isfile(args.archive):
        return _fail(f"no model archive at {args.archive} (calibrate needs a model.tar.gz)")
    try:
        archive = load_archive(args.archive)
    except (OSError, ValueError, tarfile.TarError, EOFError) as error:
        return _fail(f"cannot load {args.archive}: {error}")
    model = archive.model
    if getattr(model, "span_loss", None) != "crf":
        print(
            f"{args.archive} holds a {type(model).__name__} that is not a span or joint parser "
            'trained with span_loss: "crf": it has no span CRF to calibrate.',
            file=sys.stderr,
        )
        return 1
    reader = archive.validation_dataset_reader
    try:
        held = _read_instances(reader, args.held_out)
        report = _read_instances(reader, args.report) if args.report else None
    except ValueError as error:
        return _fail(str(error))
    print(f"fitting the temperatures on {len(held)} sentences of {args.held_out}", file=sys.stderr)
    temperatures = calibration.fit_temperatures(
        calibration.collect_held_out(model, held, args.batch_size), args.objective
    )
    os.makedirs(args.output, exist_ok=True)
    calibrated = os.path.join(args.output, "model.tar.gz")
    calibration.write_calibrated_archive(args.archive, calibrated, temperatures)
    shown = ", ".join(f"{name} {value:.3f}" for name, value in temperatures.items())
    print(f"temperatures: {shown}; wrote {calibrated}", file=sys.stderr)
    summary: dict = {
        "model": args.archive,
        "held_out": args.held_out,
        "sentences_fitted": len(held),
        "objective": args.objective,
        "temperatures": temperatures,
    }
    if report is not None:
        reports = {}
        for name, used in (("before", {k: 1.0 for k in temperatures}), ("after", temperatures)):
            model.confidence_temperatures.update(used)
            measured = calibration.measure(model, report, args.batch_size)
            reports[name] = measured.reliability
            summary[name] = measured.summary(args.bins)
        summary["report"] = args.report
        summary["sentences_reported"] = len(report)
        picture = os.path.join(args.output, "reliability.png")
        calibration.reliability_diagram(
            reports, picture, args.bins, f"{os.path.basename(args.report)}, {len(report)} sentences"
        )
        print(f"wrote {picture}", file=sys.stderr)
        for name in ("before", "after"):
            eces = ", ".join(
                f"{kind} {100 * v['ece']:.2f}" for kind, v in summary[name].items() if kind != "ranking"
            )
            print(f"ECE (%) {name}: {eces}", file=sys.stderr)
    written = os.path.join(args.output, "calibration.json")
    with open(written, "w", encoding="utf-8") as out:
        json.dump(summary, out, indent=1)
        out.write("\n")
    print(f"wrote {written}", file=sys.stderr)
    return 0


def ensemble(args: argparse.Namespace, cli: argparse.ArgumentParser) -> int:
    from allennlp.common.checks import ConfigurationError

    from lal_allennlp.models.stack_attention_ensemble import build_ensemble_archive

    if args.beam_size is not None and args.beam_size < 1:
        cli.error("--beam-size must be at least 1")
    for path in args.archives:
        if not os.path.isfile(path):
            return _fail(f"no model archive at {path} (ensemble needs model.tar.gz files)")
    try:
        build_ensemble_archive(args.archives, args.output, args.beam_size)
    except (OSError, tarfile.TarError, EOFError, ConfigurationError) as error:
        problem = " ".join(str(error).split())
        return _fail(f"cannot build the ensemble of {' '.join(args.archives)}: {problem}")
    except ValueError as error:
        print(f"{_PROG}: {error}", file=sys.stderr)
        return 1
    print(f"wrote {args.output}: an ensemble of {len(args.archives)} models", file=sys.stderr)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    cli = argparse.ArgumentParser(
        prog=_PROG,
        description="Analyse a trained parser over a treebank: head contributions by label "
        "(heads), where its F1 is lost (errors), calibrated confidences (calibrate); or build "
        "an ensemble of dependency parsers (ensemble).",
        epilog="Exit status: 0 on success, 1 if the model cannot do the analysis, 2 for a usage "
        "error or an input that cannot be read.",
    )
    commands = cli.add_subparsers(
        dest="command", required=True, metavar="{heads,errors,calibrate,ensemble}"
    )
    treebank_help = (
        "a treebank the model's dataset reader reads: a file, folder, glob or WSJ range such as "
        "DIR/wsj_0160-0179"
    )

    heads_cli = commands.add_parser(
        "heads",
        help="mean head contributions to the correct constituents of each label",
        description="The head x label matrix of a label attention parser over a treebank "
        "(gold words and POS tags as input).",
    )
    heads_cli.add_argument(
        "archive", help="a model.tar.gz of a parser with a label attention layer"
    )
    heads_cli.add_argument("treebank", help=treebank_help)
    heads_cli.add_argument(
        "-o", "--output", required=True, help="output directory (made if missing)"
    )
    heads_cli.add_argument(
        "--measure",
        choices=sorted(_MEASURES),
        default="average",
        help="average: normalise and average (the paper's Figure 6, default); softmax: the "
        "authors' code (min-max normalisation, then softmax over the heads); both",
    )
    heads_cli.add_argument(
        "--min-count",
        type=int,
        default=20,
        help="labels with fewer correct constituents are left out of the summary's tables "
        "(default: %(default)s)",
    )
    heads_cli.add_argument("--batch-size", type=int, default=32)
    heads_cli.add_argument("--cuda-device", type=int, default=-1)
    heads_cli.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    errors_cli = commands.add_parser(
        "errors",
        help="F1 by label, span length and sentence length; confusions; attachment errors",
        description="Error analysis of a parser's predictions on a treebank, as EVALB "
        "(COLLINS.prm) scores them.",
    )
    errors_cli.add_argument("archive", nargs="?", help="a model.tar.gz written by `allennlp train`")
    errors_cli.add_argument("treebank", nargs="?", help=treebank_help)
    errors_cli.add_argument(
        "--predictions",
        help="a predictions file (JSON lines of lal_allennlp.analysis.predictions) instead of "
        "MODEL TREEBANK",
    )
    errors_cli.add_argument(
        "-o", "--output", required=True, help="output directory (made if missing)"
    )
    errors_cli.add_argument(
        "--top", type=int, default=15, help="rows of the lists of cases (default: %(default)s)"
    )
    errors_cli.add_argument("--batch-size", type=int, default=32)

    calibrate_cli = commands.add_parser(
        "calibrate",
        help="fit the confidences' temperatures on held-out trees; ECE before and after",
        description="Temperature scaling of a span or joint parser trained as a tree CRF: the "
        "temperatures are fitted on HELD_OUT (trees the model was not trained on) and written "
        "into DIR/model.tar.gz, a copy of the archive; with --report, the expected calibration "
        "error and reliability diagrams before and after on other trees (DIR/calibration.json, "
        "DIR/reliability.png).",
    )
    calibrate_cli.add_argument("archive", help="a model.tar.gz trained with span_loss: crf")
    calibrate_cli.add_argument("held_out", help="the trees to fit on: " + treebank_help)
    calibrate_cli.add_argument(
        "-o", "--output", required=True, help="output directory (made if missing)"
    )
    calibrate_cli.add_argument(
        "--report", help="trees to measure calibration on (not those fitted on)"
    )
    calibrate_cli.add_argument("--bins", type=int, default=10, help="ECE bins (default: 10)")
    calibrate_cli.add_argument(
        "--objective",
        choices=("output", "gold", "ece"),
        default="output",
        help="output (default): the cross-entropy of the output's confidences against whether "
        "each item is right; gold: the NLL of the gold trees and heads (classic temperature "
        "scaling); ece: the expected calibration error of the output's confidences",
    )
    calibrate_cli.add_argument("--batch-size", type=int, default=16)

    ensemble_cli = commands.add_parser(
        "ensemble",
        help="one archive of an ensemble of stack attention dependency parsers",
        description="Writes one model.tar.gz holding the ensemble of trained "
        "stack_attention_parser archives: at every step it decodes with the mean of the "
        "members' transition probabilities (greedy or beam search, as a single model). The "
        "members must share one vocabulary and dataset reader (the same training data and "
        "config, different seeds).",
    )
    ensemble_cli.add_argument(
        "archives", nargs="+", metavar="MODEL", help="model.tar.gz files of the members"
    )
    ensemble_cli.add_argument(
        "-o", "--output", required=True, help="the ensemble's archive to write (ENSEMBLE.tar.gz)"
    )
    ensemble_cli.add_argument(
        "--beam-size",
        type=int,
        help="the ensemble's beam, 1 for greedy decoding (default: the first member's)",
    )

    args = cli.parse_args(argv)
    if getattr(args, "batch_size", 1) < 1:
        cli.error("--batch-size must be at least 1")
    if args.command == "ensemble":
        return ensemble(args, ensemble_cli)
    if os.path.exists(args.output) and not os.path.isdir(args.output):
        cli.error(f"-o {args.output}: this is a file; give a directory")
    if args.command == "heads":
        return heads(args, heads_cli)
    if args.command == "calibrate":
        return calibrate(args, calibrate_cli)
    return errors(args, errors_cli)


if __name__ == "__main__":
    sys.exit(main())
