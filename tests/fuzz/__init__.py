"""
Property-based (hypothesis) fuzz tests, derandomized so that CI runs the same cases each time.

- `test_parse_lines`: arbitrary input lines through `lal-parse`.
- `test_fuzz_readers`: real treebank slices, mutated (`reader_mutations`), read by the
  treebank readers and checked against oracles (`reader_properties`);
  `benchmarks/fuzz_readers.py` runs the same cases by the hundred thousand.
- `test_reader_regressions`: the reader bugs the fuzzing found, one small case each.
"""
