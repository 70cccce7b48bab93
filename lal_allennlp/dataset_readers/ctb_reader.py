"""
Dataset reader for the Penn Chinese Treebank (Xue et al. 2005) as the LDC distributes it, for
the span parsers (the LAL paper, Mrini et al. 2020, sec. 4, reports CTB 5.1 results). It is
the `lal_ptb` reader with CTB files: the same tree normalisation, instances, error handling,
`max_length`, sharding and tree selection (`PATH[:8000]`), plus SGML-like markup, GB2312/GBK
or UTF-8 files, and training/dev/test splits by file id (see `ctb_format`).
"""

import os
from typing import Dict, List, Optional, Sequence, Tuple

from allennlp.common.checks import ConfigurationError
from allennlp.data.dataset_readers.dataset_reader import DatasetReader

from lal_allennlp.syntax.ctb_format import (
    CTB51_SPLITS,
    CTB_SUFFIXES,
    FileIdRanges,
    decode_ctb,
    parse_file_id_ranges,
    select_by_file_id,
    strip_markup,
)
from lal_allennlp.syntax.languages import CTB_HEAD_RULES  # noqa: F401  (registers "ctb")
from lal_allennlp.syntax.paths import files_under, resolve_paths
from lal_allennlp.dataset_readers.ptb_reader import PennTreebankReader, TreebankPathError
from lal_allennlp.syntax.trees import TreebankFormatError, bad_character_problem, encoding_advice


@DatasetReader.register("lal_ctb")
class ChineseTreebankReader(PennTreebankReader):
    """
    Reads the Penn Chinese Treebank (CTB 5.1 to 9.0) from the LDC's files: one document per
    file (`chtb_001.fid`, `chtb_0001.mrg`, `chtb_3001.bn` ...), trees inside SGML-like markup
    (`<HEADLINE>`, `<TEXT>`, `<P>`, `<S ID=...>`), GB2312/GBK or UTF-8. Only the contents of
    the `<S>` elements are read where a file has them; files without markup (one tree per line
    or multi-line trees, such as the output of CTB preparation scripts) are read too. Trees
    are normalised exactly as by `lal_ptb`: `-NONE-` empty elements removed, function tags
    stripped (`NP-SBJ` -> `NP`, `NP-PN-OBJ` -> `NP`), unary chains joined.

    Registered as a `DatasetReader` with name "lal_ctb".

    A data path is anything `lal_ptb` takes (a file, a directory, a glob; with a tree selection
    `[start:stop]` at the end), or a directory followed by `#` and a split name or file-id
    ranges:

    * `CTB/data/bracketed#train`, `#dev`, `#test`: the files of the named split of `splits`
      (by default the standard CTB 5.1 split: train 1-270 and 440-1151, dev 301-325,
      test 271-300);
    * `CTB/data/bracketed#1-270,440-1151`, `#4000-4050`: the files with these ids.

    The CTB files of the directory (`chtb_<id>.<suffix>`, sub-folders included) are chosen by
    the number of their name, whatever its width (`chtb_001` and `chtb_0001` are both file 1),
    and read in file-id order.

    # Parameters

    encoding : `Optional[str]`, optional (default = `None`)
        The encoding of the files (`"gbk"`, `"gb2312"`, `"utf-8"`, ...). `None` detects it
        for each file: UTF-8 if the file is valid UTF-8, else GB18030 (a superset of GB2312
        and GBK).
    splits : `Optional[Dict[str, str]]`, optional (default = `None`)
        Split names and their file-id ranges, e.g. `{"train": "1-270,440-1151", ...}` for
        another release's split; `None` means `ctb_format.CTB51_SPLITS`.
    head_rules : `str`, optional (default = `"ctb"`)
        The head-rule table that gives the heads of joint spans (`joint_spans`) when no
        dependency files are given: `languages.CTB_HEAD_RULES`.
    **kwargs
        Every option of `lal_ptb` (`token_indexers`, `max_length`, `on_error`, ...), and those
        of `DatasetReader`.
    """

    def __init__(
        self,
        encoding: Optional[str] = None,
        splits: Optional[Dict[str, str]] = None,
        head_rules: str = "ctb",
        **kwargs,
    ) -> None:
        super().__init__(head_rules=head_rules, **kwargs)
        if encoding is not None:
            try:
                "".encode(encoding)
            except LookupError:
                raise ConfigurationError(
                    f"lal_ctb: unknown encoding {encoding!r}; use a Python codec name such as "
                    '"gbk", "gb2312" or "utf-8", or leave it out to detect UTF-8 or GBK.'
                ) from None
        self._encoding = encoding
        self._splits: Dict[str, FileIdRanges] = {}
        for name, spec in (CTB51_SPLITS if splits is None else splits).items():
            try:
                self._splits[name] = parse_file_id_ranges(spec)
            except ValueError as error:
                raise ConfigurationError(f"lal_ctb: the split {name!r}: {error}.") from None

    def _resolve_paths(self, file_path: str) -> List[str]:
        directory, hash_sign, selection = file_path.rpartition("#")
        if not hash_sign or os.path.exists(os.path.expanduser(file_path)):
            return resolve_paths(file_path, CTB_SUFFIXES, "treebank", TreebankPathError)
        if selection in self._splits:
            ranges = self._splits[selection]
        else:
            try:
                ranges = parse_file_id_ranges(selection)
            except ValueError as error:
                known = ", ".join(sorted(self._splits)) or "none"
                raise TreebankPathError(
                    f"The CTB path {file_path!r} ends in #{selection}, which is neither a split "
                    f"name (known: {known}) nor file-id ranges such as #1-270,440-1151 "
                    f"({error})."
                ) from None
        expanded = os.path.expanduser(directory)
        if not os.path.isdir(expanded):
            raise TreebankPathError(
                f"The CTB path {file_path!r} selects files by id, but {directory!r} is not a "
                "directory."
            )
        paths = select_by_file_id(files_under(expanded, CTB_SUFFIXES), ranges)
        if not paths:
            wanted = ",".join(f"{low}-{high}" for low, high in ranges)
            raise TreebankPathError(
                f"No CTB file in {directory!r} has a file id in {wanted} (looked for "
                f"chtb_<id> files ending in {'/'.join(CTB_SUFFIXES)}, sub-folders included)."
            )
        return paths

    def _file_text(
        self, path: str, errors: Optional[List[TreebankFormatError]]
    ) -> Tuple[str, Sequence[int]]:
        """
        The bracketed text of a CTB file, decoded and with its markup blanked, and the offsets
        of its `<S>` and `</S>` tags, which no tree crosses (see
        `PennTreebankReader._file_text`; when collecting, a sentence with broken markup is
        reported in `errors` and blanked).
        """
        with open(path, "rb") as treebank_file:
            data = treebank_file.read()
        lenient = False
        try:
            text = decode_ctb(path, data, self._encoding)
        except TreebankFormatError:
            if errors is None:
                raise
            text = decode_ctb(path, data, self._encoding, "surrogateescape")
            lenient = True
        reported = len(errors) if errors is not None else 0
        decoded = text
        breaks: List[int] = []
        text = strip_markup(text, path, errors, breaks)
        if lenient and errors is not None:
            # Undecodable bytes in markup that was blanked: `parse_trees` does not see them.
            stripped_lines = text.split("\n")
            for number, line in enumerate(decoded.split("\n")):
                problem = bad_character_problem(line)
                if problem and not bad_character_problem(stripped_lines[number]):
                    errors.append(
                        TreebankFormatError(
                            path, number + 1, problem + " in the markup", encoding_advice(data)
                        )
                    )
        if not text.strip() and (errors is None or len(errors) == reported):
            raise TreebankFormatError(
                path,
                None,
                "the file holds no trees" + (" (only markup)" if data.strip() else ""),
                "remove it or point the reader elsewhere",
            )
        return text, breaks
