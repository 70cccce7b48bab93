"""
Small per-language tables: head rules and punctuation tags for Chinese treebanks. The readers,
`head_rules.HeadFinder` and the metrics take them as arguments, so a language is a table, not
a copied class.

* `CTB_HEAD_RULES`: head rules for the Penn Chinese Treebank (Xue et al. 2005) in the
  `head_rules.HeadRule` format, for `HeadFinder(CTB_HEAD_RULES)`; registered as the table
  `"ctb"` of `head_rules.HEAD_RULE_TABLES` (a reader's `head_rules` option). They follow the
  conventions of the usual CTB tables (Sun & Jurafsky 2004; Zhang & Clark 2008, the
  Penn2Malt-style table behind the CTB dependency results; Stanford's ChineseHeadFinder):
  nominal and functional phrases are headed on the right (the noun, the localiser `LC`,
  `DEC`/`DEG`, the classifier), verb and prepositional phrases on the left (the verb, the
  preposition), `IP` by its `VP`.
  There is no coordination rule: `NP CC NP` is headed by its last conjunct, as in those tables.
* `CHINESE_PUNCTUATION_TAGS`: the CTB punctuation tag, `PU`, for metrics that leave
  punctuation out (UAS/LAS; `EvalbParams.delete_labels` for EVALB).
* `SINICA_PUNCTUATION_TAGS`: the punctuation categories of the Academia Sinica (CKIP) tag set
  used by the Sinica Treebank (the Sinica sample, `docs/data.md`), where a pause mark `、` is `Caa`.
"""

from typing import Dict, FrozenSet, Tuple

from lal_allennlp.syntax.head_rules import DEFAULT_RULE, HEAD_RULE_TABLES, HeadRule

# The verbal tags and verb compounds of CTB: VA (predicative adjective), VC (copula 是),
# VE (有 as main verb), VV (other verbs); VCD (coordinated verb compound), VRD (resultative),
# VSB (subordinate), VNV (A-not-A), VPT (potential), VCP (verb + copula).
_VERBS = ("VV", "VA", "VC", "VE")
_VERB_COMPOUND_RULE: Tuple[HeadRule, ...] = (("left", ("VCD", "VRD", "VSB", "VCP") + _VERBS),)

CTB_HEAD_RULES: Dict[str, Tuple[HeadRule, ...]] = {
    "ADJP": (("right", ("ADJP", "JJ")), ("right_any", ("AD", "NN", "CS"))),
    "ADVP": (("right", ("ADVP", "AD", "CS", "JJ")),),
    "CLP": (("right", ("CLP", "M")),),
    # The complementiser (DEC 的, or a sentence-final particle) heads a CP; else its clause.
    "CP": (("right", ("DEC", "SP")), ("left", ("ADVP", "CS")), ("right", ("CP", "IP", "VP"))),
    "DNP": (("right", ("DNP", "DEG", "DEC")),),
    "DP": (("left", ("DP", "DT")),),
    "DVP": (("right", ("DVP", "DEV", "DEC")),),
    "FRAG": (("right", ("VV", "NN", "NR", "NT")),),
    "INTJ": (("right", ("INTJ", "IJ", "SP")),),
    "IP": (("right", ("IP", "VP")), ("right", ("VV",))),
    "LCP": (("right", ("LCP", "LC")),),
    "LST": (("left", ("LST", "CD", "OD", "PU")),),
    "NP": (("right", ("NP", "NN", "NT", "NR", "PN", "QP", "CP")),),
    "PP": (("left", ("PP", "P")),),
    "PRN": (("right", ("NP", "IP", "VP", "NT", "NR", "NN")),),
    # The classifier phrase heads a quantifier phrase (七十一 件: 件).
    "QP": (("right", ("QP", "CLP", "CD", "OD")),),
    "UCP": (("right", ()),),
    # The verb heads its phrase; BA (把) and LB (long 被) head theirs in these tables.
    "VP": (
        ("left", ("VP", "VCD", "VPT", "VRD", "VSB", "VNV", "VCP") + _VERBS + ("BA", "LB")),
    ),
    "VCD": _VERB_COMPOUND_RULE,
    "VCP": _VERB_COMPOUND_RULE,
    "VNV": _VERB_COMPOUND_RULE,
    "VPT": _VERB_COMPOUND_RULE,
    "VRD": _VERB_COMPOUND_RULE,
    "VSB": (("right", ("VCD", "VSB") + _VERBS),),
    # Labels missing from the table take their rightmost child (head-final by default).
    DEFAULT_RULE: (("right", ()),),
}
"""Head rules for the Penn Chinese Treebank (function tags stripped), for `HeadFinder`."""

# Readers name tables by string (`"head_rules": "ctb"`, the default of `lal_ctb`).
HEAD_RULE_TABLES["ctb"] = CTB_HEAD_RULES

CHINESE_PUNCTUATION_TAGS: FrozenSet[str] = frozenset({"PU"})
"""The POS tag of punctuation in the Penn Chinese Treebank."""

SINICA_PUNCTUATION_TAGS: FrozenSet[str] = frozenset(
    {
        "COLONCATEGORY",
        "COMMACATEGORY",
        "DASHCATEGORY",
        "ETCCATEGORY",
        "EXCLANATIONCATEGORY",
        "PARENTHESISCATEGORY",
        "PAUSECATEGORY",
        "PERIODCATEGORY",
        "QUESTIONCATEGORY",
        "SEMICOLONCATEGORY",
        "SPCHANGECATEGORY",
    }
)
"""The punctuation tags of the Academia Sinica (CKIP) tag set (Sinica Treebank)."""
