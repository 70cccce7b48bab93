"""
`allennlp grid`: comparative experiments from a grid file (see `grid_file.py` for the format).

    allennlp grid run GRID.jsonnet [-o OUT] [--runs-dir DIR] [--storage URL] [--max-runs N]
    allennlp grid report GRID.jsonnet [-o OUT] [--runs-dir DIR]
    allennlp grid check GRID.jsonnet

`run` trains what is not finished (one training at a time; start the same command on other
machines with one `--storage` to share the work) and writes the tables; `report` writes the
tables from the runs finished so far; `check` reads the grid and every config and prints the
runs, training nothing. A bad grid is refused before anything trains, with a message naming the
grid file and the entry.
"""

import argparse
import os
import sys

from allennlp.commands.subcommand import Subcommand


@Subcommand.register("grid")
class GridCommand(Subcommand):
    requires_plugins = False

    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Train every variant x seed of a grid file (one training at a time; several "
            "workers share a grid through one Optuna storage), evaluate each model, and "
            "write tables (mean ± sd over seeds, paired significance tests, reference "
            "numbers) and learning curves."
        )
        subparser = parser.add_parser(self.name, description=description, help=description)
        actions = subparser.add_subparsers(dest="grid_action", metavar="{run,report,check}")
        for action, help_text in (
            ("run", "train and evaluate what is not finished, then write the tables"),
            ("report", "write the tables and curves from the finished runs"),
            ("check", "check the grid and its configs and list its runs; trains nothing"),
        ):
            sub = actions.add_parser(action, help=help_text, description=help_text)
            sub.add_argument("grid_file", help="the grid (jsonnet)")
            sub.add_argument(
                "-o",
                "--out",
                default=None,
                help="folder of the study, tables and pictures (default: runs/grids/<grid name>)",
            )
            sub.add_argument(
                "--runs-dir",
                default=os.path.join("runs", "grid_runs"),
                help="folder of the runs, shared by grids: identical runs are trained once "
                "(default: runs/grid_runs)",
            )
            if action == "run":
                sub.add_argument(
                    "--storage",
                    default=None,
                    help="Optuna storage URL shared by the workers (default: SQLite in --out); "
                    "e.g. postgresql://host/db for workers on several machines",
                )
                sub.add_argument(
                    "--max-runs", type=int, default=None, help="stop after this many runs"
                )
                sub.add_argument(
                    "--heartbeat",
                    type=int,
                    default=60,
                    help="seconds between a worker's heartbeats; a worker silent for four "
                    "is taken for dead and its run handed out again (default: 60)",
                )
            if action != "check":
                sub.add_argument(
                    "--trials",
                    type=int,
                    default=10000,
                    help="shuffles of the significance tests (default: 10000)",
                )
            sub.set_defaults(func=_main)
        subparser.set_defaults(func=lambda args: subparser.print_help())
        return subparser


def _main(args: argparse.Namespace) -> None:
    from lal_allennlp.experiments.grid_file import (
        GridError,
        check_evaluation_files,
        load_grid,
        slug,
    )

    try:
        grid = load_grid(args.grid_file)
    except GridError as error:
        print(f"allennlp grid: {error}", file=sys.stderr)
        sys.exit(2)
    out_dir = args.out or os.path.join("runs", "grids", slug(grid.name))
    if args.grid_action == "check":
        trainings = {run.train_key for run in grid.runs}
        for run in grid.all_runs:
            shared = " (evaluates the training " + run.train_key + ")" if run.test_overrides else ""
            print(f"{run.key}  {run.label}{shared}")
        print(
            f"{len(grid.all_runs)} runs of {len(grid.variants)} variants, "
            f"{len(trainings)} trainings",
            file=sys.stderr,
        )
        return
    from lal_allennlp.experiments.report import GridReport

    if args.grid_action == "run":
        from lal_allennlp.experiments.runner import GridRunner

        missing = check_evaluation_files(grid)
        if missing:
            names = ", ".join(f"{name} ({path})" for name, path in missing)
            print(
                f"allennlp grid: {args.grid_file}: evaluation file(s) not found: {names}",
                file=sys.stderr,
            )
            sys.exit(2)
        runner = GridRunner(grid, out_dir, args.runs_dir, args.storage, args.heartbeat)
        runner.run(args.max_runs)
    report = GridReport(grid, args.runs_dir, trials=args.trials)
    for path in report.write(out_dir):
        print(path)
    missing_runs = report.missing()
    if missing_runs:
        print(f"{len(missing_runs)} of {len(grid.all_runs)} runs not finished", file=sys.stderr)
