"""
Comparative experiments: grid files (`grid_file`), the runner that trains and evaluates their
runs on Optuna (`runner`), their tables, significance tests and curves (`report`), and the
`allennlp grid` subcommand (`subcommand`). Importing this package registers the subcommand;
Optuna and matplotlib are imported only when a grid runs.
"""

from lal_allennlp.experiments import subcommand  # noqa: F401
