"""What a condition string may need before it is linked: the staging and course qualifiers of the NCI (PDQ)
condition names that many ClinicalTrials.gov records carry.

"Stage IIIB Breast Cancer", "Recurrent Adult Burkitt Lymphoma", "Unspecified Adult Solid Tumor, Protocol Specific":
no terminology names the staged form, and dense retrieval of the whole string follows the qualifier ("Stage II
Colon Cancer" → Lynch Syndrome II, "Unspecified Adult Solid Tumor, Protocol Specific" → Neurofibroma, Plexiform via
its entry term "Tumor Royale"). The disease without its qualifiers is a second spelling: the written string is
linked too and wins when it matches exactly ("Childhood Obesity", "Refractory Anemia" are MeSH names).

Only qualifiers that never change which disease is meant are taken off: stage and grade designations, course
("recurrent", "refractory", "relapsed", "untreated", "newly diagnosed", "previously treated"), age group ("adult",
"childhood"), "unspecified" and the trailing "protocol specific". "Metastatic" and "advanced" stay: MeSH has
concepts for what they say (Neoplasm Metastasis).
"""

from __future__ import annotations

import re

from medlink.linking.settings import LinkerConfig

# not "stage 0": carcinoma in situ is a concept of its own
_STAGE = r"stage\s+[IV]+[A-C]?\d?(?:\s*(?:and|or|/|,)\s*[IV]+[A-C]?\d?)*"
_GRADE = r"grade\s+[1-4][AB]?"
_COURSE = r"recurrent|refractory|relapsed|unspecified|untreated|previously\s+(?:un)?treated|newly\s+diagnosed"
_LEADING = re.compile(rf"^(?:(?:{_STAGE}|{_GRADE}|{_COURSE}|adult|childhood)\s+)+", re.IGNORECASE)
_TRAILING = re.compile(r",?\s*protocol\s+specific$", re.IGNORECASE)


def condition_spellings(text: str) -> tuple[str, ...]:
    """``text``, then ``text`` without its staging and course qualifiers when it has any (and something is left).
    A text longer than any name a linker reads is left alone (the linker says why it is nil)."""
    if len(text) > LinkerConfig.max_mention_chars:
        return (text,)
    written = " ".join(text.split())  # one blank between words: the patterns' \s* never runs over a long run
    bare = _LEADING.sub("", _TRAILING.sub("", written)).strip(" ,")
    return (text, bare) if bare and bare.lower() != written.lower() else (text,)
