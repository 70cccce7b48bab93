"""
`lal_allennlp.syntax` is the pure part of the package: none of its modules may import torch or
AllenNLP, directly or through another module of `lal_allennlp`.

`lal_allennlp/__init__.py` imports everything (torch included), so the check runs in a fresh
interpreter that makes the `lal_allennlp` package object by hand (a module whose `__path__` is
the package folder, without running its `__init__.py`), imports the syntax modules one at a time
and looks at `sys.modules` after each import.
"""
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "lal_allennlp"
SYNTAX_DIR = PACKAGE_DIR / "syntax"
FORBIDDEN = ["torch", "allennlp"]
# Imported by `syntax.trees`: seeing it proves that the check sees what a module imports.
ALLOWED = "nltk"

# Run in the fresh interpreter: argv[1] the package folder, argv[2] the top-level packages to
# watch (JSON), argv[3:] the modules to import, in order.
_IMPORT_ONE_BY_ONE = """
import importlib, json, sys, types

package = types.ModuleType("lal_allennlp")
package.__path__ = [sys.argv[1]]
sys.modules["lal_allennlp"] = package
watched = json.loads(sys.argv[2])
loaded_after = {}
for name in sys.argv[3:]:
    importlib.import_module(name)
    loaded_after[name] = [root for root in watched if root in sys.modules]
print(json.dumps({
    "loaded_after": loaded_after,
    "package_init_ran": sys.modules["lal_allennlp"] is not package,
    "lal_modules": sorted(m for m in sys.modules if m.startswith("lal_allennlp.")),
}))
"""


def syntax_modules():
    """`lal_allennlp.syntax` and every module in its folder, in file-name order."""
    names = sorted(info.name for info in pkgutil.iter_modules([str(SYNTAX_DIR)]))
    return ["lal_allennlp.syntax"] + [f"lal_allennlp.syntax.{name}" for name in names]


def test_no_syntax_module_imports_torch_or_allennlp():
    modules = syntax_modules()
    # The folder is really read: the modules the parsers and readers import are all there.
    for name in ("trees", "joint_spans", "head_rules", "dependencies", "ctb_format", "paths"):
        assert f"lal_allennlp.syntax.{name}" in modules
    completed = subprocess.run(
        [sys.executable, "-c", _IMPORT_ONE_BY_ONE, str(PACKAGE_DIR)]
        + [json.dumps(FORBIDDEN + [ALLOWED])]
        + modules,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout.strip().splitlines()[-1])

    assert not result["package_init_ran"]
    assert list(result["loaded_after"]) == modules
    assert ALLOWED in result["loaded_after"]["lal_allennlp.syntax.trees"]
    # The first module after which torch or allennlp is loaded is the one that imports it.
    culprits = {
        name: [root for root in loaded if root in FORBIDDEN]
        for name, loaded in result["loaded_after"].items()
        if set(loaded) & set(FORBIDDEN)
    }
    assert culprits == {}, (
        f"syntax modules after which torch or allennlp is loaded (the first one imports it, "
        f"maybe through a module it imports): "
        f"{culprits}; lal_allennlp modules loaded: {result['lal_modules']}"
    )
