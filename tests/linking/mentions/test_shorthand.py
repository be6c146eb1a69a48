"""Clinical shorthand: the lexicon, the choice between the written and the spelled-out mention, and the linker."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medlink.errors import MedlinkError
from medlink.linking import Linker, LinkerConfig
from medlink.linking.mentions.shorthand import default_shorthand, links_better, read_shorthand, shorthand_lexicon
from medlink.linking.results import LinkResult, Stage
from medlink.terminology import load_default_terminology


@pytest.fixture(scope="module")
def mesh():
    return load_default_terminology()


def test_the_shipped_lexicon_spells_out_whole_tokens_by_case() -> None:
    lexicon = default_shorthand()
    assert lexicon.expand("T2DM") == "type 2 diabetes mellitus"
    assert lexicon.expand("HTN and T2DM") == "hypertension and type 2 diabetes mellitus"
    assert lexicon.expand("breast ca") == "breast cancer"
    assert lexicon.expand("ca") == "ca"  # a lone "ca" is calcium: expanded only inside a longer mention
    assert lexicon.expand("Ca channel blocker") == "Ca channel blocker"  # case-sensitive
    assert lexicon.expand("MIND study") == "MIND study"  # whole tokens only
    assert lexicon.expand("myocardial infarction") == "myocardial infarction"
    assert lexicon.expand("A-fib") == "atrial fibrillation"  # a hyphenated short form
    assert lexicon.expand("HTN-related stroke") == "hypertension-related stroke"  # a part of a hyphenated token


def test_a_malformed_lexicon_line_names_its_file_and_line(tmp_path: Path) -> None:
    good = tmp_path / "good.tsv"
    good.write_text("# comment\nHTN\thypertension\nca\tcancer\tinside\n")
    assert read_shorthand(good).expand("HTN, lung ca") == "hypertension, lung cancer"
    bad = tmp_path / "bad.tsv"
    bad.write_text("HTN\thypertension\nT2DM type 2 diabetes\n")
    with pytest.raises(MedlinkError, match=r"bad.tsv, line 2: expected"):
        read_shorthand(bad)
    bad.write_text("ca\tcancer\tsometimes\n")
    with pytest.raises(MedlinkError, match=r"line 1: the third field can only be 'inside'"):
        read_shorthand(bad)


def test_the_written_mention_keeps_an_exact_name_and_a_better_score() -> None:
    def result(stage: Stage, score: float | None, concepts: tuple[str, ...] = ("X",)) -> LinkResult:
        return LinkResult("m", concepts, stage, score)

    assert not links_better(result(Stage.EXACT, 1.0), result(Stage.EXACT, 1.0))  # "ITP" is a MeSH name
    assert links_better(result(Stage.EXACT, 1.0), result(Stage.DENSE, 0.9))
    assert links_better(result(Stage.DENSE, 0.8), result(Stage.NIL, 0.7, ()))
    assert not links_better(result(Stage.DENSE, 0.6), result(Stage.DENSE, 0.7))
    assert not links_better(result(Stage.NIL, None, ()), result(Stage.DENSE, 0.5))


def test_the_linker_links_shorthand_through_its_spelled_out_form(mesh) -> None:
    linker = Linker(mesh)  # exact match over the embedded MeSH descriptors: no encoder
    t2dm, htn, itp, plain = linker.link_many(["T2DM", "HTN", "ITP", "hypertension"])
    assert t2dm.concepts == ("MESH:D003924",) and "clinical shorthand spelled out as 'type 2 diabetes" in t2dm.reason
    assert t2dm.mention == "T2DM"
    assert htn.concepts == plain.concepts == ("MESH:D006973",)
    assert itp.preferred_names == ("Inosine Triphosphate",)  # a MeSH name as written stands
    off = Linker(mesh, config=LinkerConfig(shorthand=False))
    assert off.link("T2DM").concepts == ()


def test_a_lexicon_of_your_own_joins_and_overrides_medlinks(mesh, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from medlink.cli import main

    own = tmp_path / "ward.tsv"
    own.write_text("SOB\tdyspnea\nMS\tmitral valve stenosis\n")
    assert shorthand_lexicon(own).expand("SOB, MS, HTN") == "dyspnea, mitral valve stenosis, hypertension"
    linker = Linker(mesh, config=LinkerConfig(shorthand_file=own))
    assert [r.preferred_names for r in linker.link_many(["SOB", "MS"])] == [("Dyspnea",), ("Mitral Valve Stenosis",)]
    bad = tmp_path / "bad.tsv"
    bad.write_text("SOB dyspnea\n")
    result = CliRunner().invoke(main, ["link", "--exact-only", "--shorthand-file", str(bad), "SOB"])
    assert result.exit_code != 0 and "bad.tsv, line 1" in result.output and "mention\t" not in result.output


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_text_without_a_listed_short_form_comes_back_unchanged(text: str) -> None:
    lexicon = default_shorthand()
    listed = set(lexicon.anywhere) | set(lexicon.inside)
    words = set(re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*", text))
    parts = {part for word in words for part in word.split("-")}
    expanded = lexicon.expand(text)
    if not (words | parts) & listed:
        assert expanded == text
    else:
        assert len(expanded) >= len(text)  # every expansion is longer than its short form ("CVA" → "stroke")
