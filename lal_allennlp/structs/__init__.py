"""Structures over score charts (placeholder while the layout moves)."""
from lal_allennlp.structs.tree_crf import tree_log_partition
