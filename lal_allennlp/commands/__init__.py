"""
Console commands (entry points in `setup.py`):

- `parse`: `lal-parse`, raw or pre-tokenised sentences in, one tree (or CoNLL-U) per line out.
- `explain`: `lal-explain`, a picture or page of what a label attention parser attends to.
"""
