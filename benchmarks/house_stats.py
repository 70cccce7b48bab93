"""
The shape of the package in one or more checkouts, side by side, as Markdown: lines per folder
of ``lal_allennlp/``, the biggest files, import circles between the package's modules, and the
shims and patches applied when the package is imported.

    python benchmarks/house_stats.py ../before .

- Lines are ``wc -l`` lines of the ``.py`` files.
- Circles are the strongly connected components of the graph "module A imports module B"
  (``import`` and ``from ... import`` statements anywhere in a module, function bodies
  included, resolved to modules of ``lal_allennlp``; importing a package counts as importing
  its ``__init__``, not its children), with more than one module.
- Shims and patches are the calls in the bodies of ``apply_shims`` (``_compat/shims.py``) and
  ``apply_patches`` (``patches/__init__.py``), or the tuple of patches that body loops over.
"""
import ast
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Set

PACKAGE = "lal_allennlp"


def _modules(root: Path) -> Dict[str, Path]:
    package = root / PACKAGE
    modules = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def line_counts(root: Path) -> Dict[str, int]:
    """Lines per top folder of the package (``(top)`` for its own files)."""
    counts: Dict[str, int] = defaultdict(int)
    for path in (root / PACKAGE).rglob("*.py"):
        parts = path.relative_to(root / PACKAGE).parts
        folder = parts[0] if len(parts) > 1 else "(top)"
        counts[folder] += len(path.read_text(encoding="utf-8").splitlines())
    return dict(counts)


def biggest_files(root: Path, count: int) -> List[tuple]:
    sizes = [
        (len(path.read_text(encoding="utf-8").splitlines()), str(path.relative_to(root)))
        for path in (root / PACKAGE).rglob("*.py")
    ]
    return sorted(sizes, reverse=True)[:count]


def _imports(name: str, path: Path, modules: Dict[str, Path]) -> Set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
        for target in targets:
            if target in modules and target != name:
                found.add(target)
    return found


def circles(root: Path) -> List[List[str]]:
    """Strongly connected components (Tarjan) of more than one module."""
    modules = _modules(root)
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    components: List[List[str]] = []
    sys.setrecursionlimit(10000)

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for child in graph[node]:
            if child not in index:
                visit(child)
                low[node] = min(low[node], low[child])
            elif child in on_stack:
                low[node] = min(low[node], index[child])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for name in graph:
        if name not in index:
            visit(name)
    # A package's __init__ importing its own children is how packages register their classes,
    # not a circle between siblings: only components that stay circular without those edges.
    return [c for c in components if not _only_through_init(c, graph)]


def _only_through_init(component: List[str], graph: Dict[str, Set[str]]) -> bool:
    members = set(component)
    for start in component:
        for child in graph[start] & members:
            if not child.startswith(start + ".") and not start.startswith(child + "."):
                return False
    return True


def applied_at_import(root: Path, file: str, function: str) -> List[str]:
    """The calls in the body of ``function`` in ``file``; where the body loops over a
    module-level tuple (``for patch in PATCHES: patch()``), that tuple's names."""
    path = root / PACKAGE / file
    if not path.is_file():
        return []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    tuples = {
        target.id: [ast.unparse(item) for item in node.value.elts]
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            loops = [s for s in node.body if isinstance(s, ast.For)]
            if loops and isinstance(loops[0].iter, ast.Name) and loops[0].iter.id in tuples:
                return tuples[loops[0].iter.id]
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            return [
                ast.unparse(call.func)
                for statement in node.body
                if isinstance(statement, ast.Expr) and isinstance(call := statement.value, ast.Call)
            ]
    return []


def main() -> None:
    roots = [Path(arg).resolve() for arg in sys.argv[1:]] or [Path(__file__).resolve().parents[1]]
    names = [root.name for root in roots]
    print("| folder | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(roots))
    counts = [line_counts(root) for root in roots]
    for folder in sorted(set().union(*counts)):
        print(f"| {folder} | " + " | ".join(str(c.get(folder, 0)) for c in counts) + " |")
    print("| **total** | " + " | ".join(str(sum(c.values())) for c in counts) + " |")
    for root in roots:
        print(f"\n**{root.name}**: biggest files: " + ", ".join(
            f"`{path}` {lines}" for lines, path in biggest_files(root, 6)))
        found = circles(root)
        print(f"- import circles: {len(found)}" + "".join(f"; {' <-> '.join(c)}" for c in found))
        shims = applied_at_import(root, "_compat/shims.py", "apply_shims")
        patches = applied_at_import(root, "patches/__init__.py", "apply_patches")
        print(f"- shims applied at import: {len(shims)} ({', '.join(shims)})")
        print(f"- patches applied at import: {len(patches)} ({', '.join(patches)})")


if __name__ == "__main__":
    main()
