"""Every default written once: the options of ``medlink link`` / ``eval`` say by default what ``LinkerConfig`` says
by default (issue 56). An option that starts to disagree with its setting fails here."""

from __future__ import annotations

from dataclasses import fields

from medlink.cli.linker_options import LinkerChoice, config_from_choice
from medlink.linking import LinkerConfig

# The choice's fields named otherwise than the setting they set
RENAMED = {"abbreviations": "expand_abbreviations", "composites": "split_composites"}
NOT_SETTINGS = {
    "terminology_dir",
    "index_dir",
    "sieves",
    "exact_only",
    "ranker_dir",
    "reranker_dir",
    "embedded",
    "ef_search",
    "number_agreement",
}  # what linker to build, not how it links


def test_every_linking_option_defaults_to_its_setting() -> None:
    config = LinkerConfig()
    choice = LinkerChoice()
    compared = 0
    for field in fields(LinkerChoice):
        if field.name in NOT_SETTINGS:
            continue
        setting = RENAMED.get(field.name, field.name)
        value = getattr(choice, field.name)
        expected = getattr(config, setting)
        if field.name == "branches":  # "C,F03" on the command line, a tuple in the settings
            value = tuple(value.split(",")) if value else ()
        if field.name == "number_margin" and value is None:  # None: "the setting's default"
            value = expected
        assert value == expected, f"--{field.name.replace('_', '-')} defaults to {value!r}, {setting} to {expected!r}"
        compared += 1
    assert compared >= 12


def test_the_options_left_alone_make_the_default_settings() -> None:
    assert config_from_choice(LinkerChoice()) == LinkerConfig()
