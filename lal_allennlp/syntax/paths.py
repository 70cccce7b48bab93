"""
Turning a data path from a config into the sorted list of files it names: a file, a
directory, a glob, or a directory plus a WSJ file-id range (`DIR/wsj_0001-0159`), and the
tree selection a treebank path may end with (`FILE[:8000]`). Shared by the treebank readers
and the dependency reader; no allennlp or torch import.
"""
import glob
import os
import re
from typing import List, Optional, Sequence, Tuple, Type, Union

# `DIR/wsj_0001-0159` (also `DIR/wsj_0001-wsj_0159`): a file-id prefix and a numeric range.
_RANGE_RE = re.compile(r"^(?P<prefix>.*?)(?P<low>\d+)-(?:(?P=prefix))?(?P<high>\d+)$")
_GLOB_CHARACTERS = re.compile(r"[*?\[]")


def files_under(directory: str, suffixes: Sequence[str]) -> List[str]:
    """Files with one of `suffixes` in `directory` and its sub-folders, by relative path."""
    found = []
    for root, folders, files in os.walk(directory):
        folders.sort()
        for name in files:
            if name.endswith(tuple(suffixes)):
                found.append(os.path.join(root, name))
    return sorted(found, key=lambda path: os.path.relpath(path, directory))


def resolve_paths(
    file_path: Union[str, "os.PathLike[str]"],
    suffixes: Sequence[str],
    kind: str,
    error: Type[Exception],
) -> List[str]:
    """
    Turns a path into the sorted list of files it names. Tried in this order:

    1. an existing file: that file;
    2. an existing directory: every file ending in one of `suffixes` in it and its sub-folders
       (the LDC layout `wsj/00/wsj_0001.mrg` works), sorted by relative path;
    3. a glob such as `data/*.mrg` or `wsj/**/wsj_01*.mrg` (`**` crosses folders): the matching
       files, and the files of any matching directory;
    4. a WSJ file-id range `DIR/wsj_0001-0159` (or `DIR/wsj_0001-wsj_0159`): the files in `DIR`
       and its sub-folders whose name is the prefix (`wsj_`) followed by a number of the same
       number of digits between the two bounds, inclusive.

    `kind` names the data in messages ("treebank", "dependency"); `error` is raised, naming the
    path and what was tried, if nothing matches.
    """
    listed = "/".join(suffixes)
    path = os.fspath(file_path)
    expanded = os.path.expanduser(path)
    if os.path.isfile(expanded):
        return [expanded]
    if os.path.isdir(expanded):
        files = files_under(expanded, suffixes)
        if not files:
            raise error(f"The {kind} directory {path!r} holds no {listed} files.")
        return files
    tried = ["a file", "a directory"]
    if _GLOB_CHARACTERS.search(expanded):
        files = []
        for match in sorted(glob.glob(expanded, recursive=True)):
            if os.path.isfile(match):
                files.append(match)
            elif os.path.isdir(match):
                files.extend(files_under(match, suffixes))
        if files:
            return files
        tried.append("a glob pattern (it matched no files)")
    directory, name = os.path.split(expanded)
    range_match = _RANGE_RE.match(name)
    if range_match is not None:
        prefix, low, high = range_match.group("prefix", "low", "high")
        if int(low) > int(high):
            raise error(f"The file-id range in {path!r} is empty: {low} is greater than {high}.")
        if not os.path.isdir(directory or "."):
            raise error(
                f"The {kind} path {path!r} is a file-id range, but its directory "
                f"{directory!r} does not exist."
            )
        name_re = re.compile(re.escape(prefix) + r"(\d{" + str(len(low)) + r"})(?!\d)")
        files = []
        for candidate in files_under(directory or ".", suffixes):
            match = name_re.match(os.path.basename(candidate))
            if match is not None and int(low) <= int(match.group(1)) <= int(high):
                files.append(candidate)
        if files:
            return files
        tried.append(
            f"a file-id range: no {listed} file in {directory or '.'!r} is "
            f"named {prefix}{low} ... {prefix}{high}"
        )
    else:
        tried.append("a file-id range like DIR/wsj_0001-0159 (the name is not one)")
    raise error(f"No {kind} files found at {path!r}. Tried it as {'; as '.join(tried)}.")


# A tree selection at the end of a data path: `FILE[:8000]`, `FILE[8000:]`, `DIR[100:200]`.
_SELECTION_RE = re.compile(r"^(?P<path>.+)\[(?P<start>\d*):(?P<stop>\d*)\]$")



def resolve_path_list(
    file_path: Union[str, "os.PathLike[str]"],
    suffixes: Sequence[str],
    kind: str,
    error: Type[Exception],
) -> List[str]:
    """
    The files of one path or several joined by commas (`"a/train.conllu,b/wsj_0001-0159"`), in
    that order, each resolved by `resolve_paths`.

    # Raises

    `error` for an empty part (`"a,,b"`, a trailing comma) or a part that names no file.
    """
    parts = [part.strip() for part in os.fspath(file_path).split(",")]
    if not all(parts):
        raise error(
            f"The data path {os.fspath(file_path)!r} has an empty part: give paths joined by "
            "single commas."
        )
    paths: List[str] = []
    for part in parts:
        paths.extend(resolve_paths(part, suffixes, kind, error))
    return paths

def split_tree_selection(
    file_path: Union[str, "os.PathLike[str]"]
) -> Tuple[str, Optional[Tuple[int, Optional[int]]]]:
    """
    Splits a trailing tree selection off a data path, like a Python slice with non-negative
    bounds: `trees.txt[:8000]` is the first 8,000 trees of the path, `trees.txt[8000:]` the
    rest, `DIR[100:200]` trees 100 to 199 (0-based) of all the files of `DIR` in reading order.
    Returns `(path, (start, stop))` with `stop` `None` for an open end, or `(path, None)` when
    the path has no selection or names an existing file as it stands.

    # Raises

    `ValueError` if `stop` is not greater than `start`.
    """
    path = os.fspath(file_path)
    match = _SELECTION_RE.match(path)
    if match is None or os.path.exists(os.path.expanduser(path)):
        return path, None
    start = int(match.group("start") or 0)
    stop = int(match.group("stop")) if match.group("stop") else None
    if stop is not None and stop <= start:
        raise ValueError(f"The tree selection of {path!r} is empty: {stop} is not above {start}.")
    return match.group("path"), (start, stop)
