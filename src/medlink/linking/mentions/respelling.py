"""Other spellings of a mention that a terminology may hold under another form.

MeSH, MEDIC and most vocabularies spell the American way, while half the literature and most European clinical
text writes "oedema", "haematuria", "tumour", "sulphate": dense retrieval then reads different word pieces and
guessed "Scleredema" for "oedema". :func:`standard_spelling` rewrites the British forms of medical vocabulary
(and joins digit groups: "SR 48,968" is "SR 48968").

Salts are another case: "metformin hydrochloride" is in no terminology, and MeSH files most salts under their
parent drug ("Metformin"). :func:`without_salt` drops the salt or ester words from the end of a drug name.
Eponyms the third: "Parkinson's" alone means Parkinson's disease, but dense retrieval found "Parkinsonism";
:func:`eponym_names` gives the disease and syndrome names a possessive eponym stands for. A radioactive label
("[3H]-L-arginine") names the labelled compound: :func:`without_isotope_label`. And an anion is written for its
acid ("metrizoate", "kainate"), which MeSH files as the acid ("Metrizoic Acid"): :func:`acid_name`.

The linker searches these spellings beside the mention as written and keeps what links better
(:class:`medlink.linking.Linker`, ``LinkerConfig.respell``); the terminology's own keys are untouched, so no index
needs rebuilding.
"""

from __future__ import annotations

import re

# (British, American) stems, matched inside lower-case words. Each stem is specific enough that no American word
# holds it: "haem" (haemorrhage, haematuria), "aemi" (anaemia, leukaemia, ischaemia), "oedem" (oedema), …
_STEMS = (
    ("haem", "hem"),
    ("aemi", "emi"),
    ("anaesth", "anesth"),
    ("paed", "ped"),
    ("gynaec", "gynec"),
    ("ischaem", "ischem"),
    ("aetiol", "etiol"),
    ("faec", "fec"),
    ("caec", "cec"),
    ("oesophag", "esophag"),
    ("oedem", "edem"),
    ("oestr", "estr"),
    ("foet", "fet"),
    ("rrhoea", "rrhea"),
    ("pnoea", "pnea"),
    ("coeliac", "celiac"),
    ("tumour", "tumor"),
    ("colour", "color"),
    ("behaviour", "behavior"),
    ("odour", "odor"),
    ("sulph", "sulf"),
    ("fibre", "fiber"),
    ("centre", "center"),
    ("litre", "liter"),
    ("ageing", "aging"),
    ("aluminium", "aluminum"),
    ("caesar", "cesar"),
    ("isation", "ization"),
    ("oxaem", "oxem"),
    ("glycaem", "glycem"),
)
# "angioedema" is American ("angio-" + "edema"); "lymphoedema" and "myxoedema" are British.
_STEM_RE = re.compile("|".join(f"(?<!angi){b}" if b == "oedem" else b for b, _ in _STEMS))
_AMERICAN = dict(_STEMS)
_DIGIT_GROUP = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")  # "SR 48,968" is "SR 48968"; "1,2-diol" keeps its locants

_SALT_WORDS = (
    "hydrochloride|hcl|sulfate|sulphate|mesylate|mesilate|sodium|potassium|calcium|magnesium|acetate|phosphate|"
    "citrate|maleate|tartrate|bitartrate|fumarate|succinate|besylate|besilate|bromide|chloride|hydrobromide|lactate|"
    "gluconate|dihydrate|monohydrate|trihydrate|hyclate|disodium|dipropionate|propionate|valerate|tosylate|"
    "hemifumarate|oxalate|nitrate|pamoate|embonate"
)
# A salt word after a drug name ("irinotecan hydrochloride", "penicillin-G potassium"), never the whole mention.
_SALT_SUFFIX = re.compile(rf"(?<=\S)\s+(?:{_SALT_WORDS})$", re.IGNORECASE)


# A radioactive label before a chemical name: "[3H]-L-arginine", "[(3)H]saxitoxin", "[125I]MIBG", "[99mTc]…".
_ISOTOPE_LABEL = re.compile(r"^\[\(?\d{1,3}m?\)?[A-Z][a-z]?\]-?(?=\S)")
# The "-ate" of an anion at the end of a name of at least three letters before it ("kainate", not "ate").
_ANION_ENDING = re.compile(r"(?<=[a-z]{3})ates?$", re.IGNORECASE)
# What caused a condition, written before it: "cocaine-induced paranoia", "contrast media-induced nephropathy".
_CAUSE_PREFIX = re.compile(r"^\S.*?[- ](induced|associated|related)\s+(?=\S)", re.IGNORECASE)
_COORDINATION = re.compile(r"\b(?:and|or)\b|/", re.IGNORECASE)
_GENERIC_HEADS = frozenset(
    {
        "disease",
        "diseases",
        "disorder",
        "disorders",
        "syndrome",
        "syndromes",
        "condition",
        "conditions",
        "illness",
        "illnesses",
    }
)
# A name in the possessive and nothing after it: "Parkinson's", "Graves'", "Lou Gehrig's" (never "Parkinsons":
# a plural reads the same).
_POSSESSIVE_EPONYM = re.compile(r"[A-Za-z][A-Za-z-]*(?: [A-Za-z][A-Za-z-]*)*?['’]s?")


def standard_spelling(text: str) -> str:
    """``text`` with British spellings of medical words made American ("Haemorrhagic oedema" → "hemorrhagic
    edema") and digit groups joined ("RP 67,580" → "RP 67580"); ``text`` itself when it holds neither. The result
    is lower-cased where a spelling changed, which the encoders and the normalizer ignore."""
    if "," in text:
        text = _DIGIT_GROUP.sub("", text)
    lowered = text.lower()
    if not _STEM_RE.search(lowered):
        return text
    return _STEM_RE.sub(lambda match: _AMERICAN[match.group()], lowered)


def without_salt(text: str) -> str:
    """``text`` without the salt and ester words at its end ("estramustine phosphate sodium" → "estramustine");
    ``text`` itself when it ends with none."""
    bare = text.strip()
    while (shorter := _SALT_SUFFIX.sub("", bare)) != bare:
        bare = shorter
    return bare


def eponym_names(text: str) -> tuple[str, ...]:
    """The names a possessive eponym alone stands for, the disease first ("Parkinson's" → "Parkinson's disease",
    "Parkinson's syndrome"); none for any other text. The linker takes the first that is a terminology name."""
    match = _POSSESSIVE_EPONYM.fullmatch(text.strip())
    if match is None:
        return ()
    return tuple(f"{match.group().strip()} {head}" for head in ("disease", "syndrome"))


def acid_name(text: str) -> str:
    """The acid a carboxylate-style anion name stands for ("metrizoate" → "metrizoic acid", "pyrrolidine
    dithiocarbamate" → "pyrrolidine dithiocarbamic acid"); ``text`` itself when it does not end in "-ate". Many
    results name nothing ("phosphate" → "phosphic acid"): the linker takes one only when it is a name."""
    return _ANION_ENDING.sub("ic acid", text.strip())


def without_cause(text: str) -> str:
    """The condition a mention names after what caused it ("cocaine-induced paranoia" → "paranoia"); ``text``
    itself when it names no cause, when the causes are coordinated ("RCC- and VHL-associated tumors": a composite)
    or when only a generic head would be left ("PLP-associated disease"). Corpora annotate the condition (BC5CDR:
    "contrast media-induced nephropathy" is Kidney Diseases); the linker takes it only when it is known exactly."""
    text = text.strip()
    match = _CAUSE_PREFIX.match(text)
    if match is None or _COORDINATION.search(match.group()):
        return text
    condition = text[match.end() :]
    return text if condition.lower() in _GENERIC_HEADS else condition


def says_the_same_cause(mention: str, name: str) -> bool:
    """Whether ``name`` writes the cause relation ``mention`` does ("drug-induced hepatitis", "Hepatitis,
    Drug-Induced"): then that name, not the bare condition, is what the mention means."""
    match = _CAUSE_PREFIX.match(mention.strip())
    return match is not None and match.group(1).lower() in name.lower()


def without_isotope_label(text: str) -> str:
    """``text`` without a leading isotope label ("[3H]-L-arginine" → "L-arginine"; terminologies name the compound,
    corpora annotate it so); ``text`` itself when it starts with none."""
    return _ISOTOPE_LABEL.sub("", text.strip())
