"""Every default written once (issue 56): the linking commands' options are made from ``LinkerConfig``'s and
``AnnotatorConfig``'s declarations, so each option says by default what its setting says by default; a ``--config``
file sets the same settings by their field names, and a spaCy component's ``linker`` table does too."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from medlink.cli import main
from medlink.cli.linker_options import LinkerChoice, linker_options
from medlink.errors import MedlinkError
from medlink.linking import LinkerConfig
from medlink.linking.annotation.annotator import AnnotatorConfig
from medlink.options import declared_settings, settings_of, settings_toml

COMMANDS = ("link", "eval", "annotate", "serve")


def _options(command: click.Command) -> dict[str, click.Option]:
    return {parameter.name: parameter for parameter in command.params if isinstance(parameter, click.Option)}


@pytest.mark.parametrize("name", COMMANDS)
def test_every_linker_option_defaults_to_its_setting(name: str) -> None:
    command = main.get_command(click.Context(main), name)
    assert command is not None
    options = _options(command)
    settings = [*declared_settings(LinkerConfig), *(declared_settings(AnnotatorConfig) if name == "annotate" else [])]
    compared = 0
    for setting in settings:
        if name == "serve" and setting.name == "max_document_chars":
            continue  # the service's own limit, ServiceSettings'
        option = options[setting.name]
        default = tuple(option.default) if option.multiple else option.default
        assert default == setting.default, f"{name} {option.opts[0]} defaults to {default!r}, not {setting.default!r}"
        assert option.help == setting.metadata["help"]
        assert option.hidden is setting.metadata["research"]
        compared += 1
    assert compared >= len(declared_settings(LinkerConfig)) - 1


def test_the_options_left_alone_make_the_default_settings() -> None:
    assert LinkerChoice().settings() == LinkerConfig()


def test_research_settings_leave_the_everyday_help_but_still_work() -> None:
    shown = CliRunner().invoke(main, ["link", "--help"]).output
    assert "--nil-threshold" in shown and "--config" in shown
    assert "--count-head" not in shown and "--several-above" not in shown and "--cache-size" not in shown
    result = CliRunner().invoke(main, ["link", "--exact-only", "--no-composites", "heart attack"])
    assert result.exit_code == 0, result.output
    assert "MESH:D009203" in result.output


def _choice(*args: str) -> LinkerChoice:
    seen: list[LinkerChoice] = []

    @click.command()
    @linker_options
    def command(linker_choice: LinkerChoice) -> None:
        seen.append(linker_choice)

    result = CliRunner().invoke(command, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return seen[0]


def test_a_config_file_sets_research_settings_and_the_command_line_wins(tmp_path: Path) -> None:
    (tmp_path / "mine.tsv").write_text("HTN\thypertension\n")
    path = tmp_path / "ablation.toml"
    path.write_text(
        '[linker]\nsplit_composites = false\nnil_threshold = 0.3\nnumber_margin = "none"\nbranches = ["C"]\n'
        'shorthand_file = "mine.tsv"\nbatch_size = 64\n'
    )
    from_file = _choice("--config", str(path)).settings()
    assert (from_file.split_composites, from_file.nil_threshold, from_file.number_margin) == (False, 0.3, None)
    assert from_file.branches == ("C",) and from_file.batch_size == 64
    assert from_file.shorthand_file == tmp_path / "mine.tsv"  # relative to the file, not to where it runs
    overridden = _choice("--config", str(path), "--nil-threshold", "0.5", "--composites", "--branches", "C,F03")
    settings = overridden.settings()
    assert (settings.nil_threshold, settings.split_composites, settings.branches) == (0.5, True, ("C", "F03"))
    assert settings.batch_size == 64  # what the command line leaves alone, the file still says


def test_the_old_number_agreement_switch_still_turns_the_rule_off() -> None:
    assert _choice("--no-number-agreement").settings().number_margin is None
    assert _choice("--number-margin", "none").settings().number_margin is None
    assert _choice().settings().number_margin == LinkerConfig().number_margin


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ("split_composite = false", "no setting 'split_composite' \\(did you mean 'split_composites'\\?\\)"),
        ('nil_threshold = "high"', "nil_threshold: expected a number"),
        ("cache_size = 1.5", "cache_size: expected an integer"),
        ("cache_size = -1", "cache_size: -1 is below the least allowed"),
        ("respell = 1", "respell: expected true or false"),
        ("several_above = nan", "expected a finite number"),
        ("branches = [1, 2]", "branches: expected a list of strings"),
        ("shorthand_file = 3", "shorthand_file: expected a path"),
    ],
)
def test_a_bad_setting_in_a_config_file_names_the_file_and_the_setting(
    tmp_path: Path, table: str, problem: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(f"[linker]\n{table}\n")
    with pytest.raises(MedlinkError, match=problem) as caught:
        _choice("--config", str(path)).settings()
    assert str(path) in str(caught.value)


@pytest.mark.parametrize("text", ["[linkr]\nrespell = false\n", "respell = false\n", "[linker\n", "\xff"])
def test_a_config_file_that_is_not_a_linker_table_is_refused_by_the_command(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="latin-1")
    result = CliRunner().invoke(main, ["link", "--exact-only", "--config", str(path), "aspirin"])
    assert result.exit_code == 2 and "bad.toml" in result.output and "Traceback" not in result.output


def test_print_config_writes_a_file_that_reads_back_as_the_defaults(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["link", "--print-config"])
    assert result.exit_code == 0
    table = tomllib.loads(result.output)["linker"]
    assert set(table) == {s.name for s in declared_settings(LinkerConfig) if s.default is not None}
    assert settings_of(LinkerConfig, table, where="printed") == LinkerConfig()
    assert settings_toml(LinkerConfig, "linker") == result.output


def test_settings_of_keeps_the_base_and_refuses_what_is_not_a_table() -> None:
    base = LinkerConfig(nil_threshold=0.4)
    assert settings_of(LinkerConfig, {"respell": False}, where="x", base=base) == dataclasses.replace(
        base, respell=False
    )
    with pytest.raises(MedlinkError, match="x: expected a table"):
        settings_of(LinkerConfig, ["respell"], where="x")  # type: ignore[arg-type]


def test_annotate_offers_the_annotators_settings() -> None:
    result = CliRunner().invoke(main, ["annotate", "--exact-only", "--no-context", "No myocardial infarction."])
    assert result.exit_code == 0, result.output
    assert '"negated": false' in result.output
    result = CliRunner().invoke(main, ["annotate", "--exact-only", "No myocardial infarction."])
    assert '"negated": true' in result.output


def test_serve_keeps_its_own_document_limit_apart_from_the_linkers(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("uvicorn", reason="the service needs the [serve] extras")
    from medlink.cli import serve_command
    from medlink.serve.settings import ServiceSettings

    seen: dict = {}
    made = ServiceSettings.from_environment

    def settings_from_environment(**limits: object) -> ServiceSettings:
        seen["settings"] = made(**limits)  # type: ignore[arg-type]
        return seen["settings"]

    def no_linker(choice: LinkerChoice, **_: object) -> None:
        seen["choice"] = choice
        raise click.Abort  # nothing is served

    monkeypatch.setattr(serve_command.ServiceSettings, "from_environment", settings_from_environment)
    monkeypatch.setattr(serve_command, "make_linker", no_linker)
    CliRunner().invoke(main, ["serve", "--exact-only", "--max-document-chars", "500"])
    assert seen["settings"].max_document_chars == 500  # the service's limit
    assert "max_document_chars" not in seen["choice"].given  # not how far the linker reads documents


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ("nil_threshold = 1" + "0" * 400, "expected a finite number of sensible size"),
        ("max_mention_chars = 9" + "9" * 5000, "not a readable TOML file"),
        ("batch_size = 10_000_000", "above the most allowed"),
        ('shorthand_file = "nope.tsv"', "nope.tsv does not exist"),
        ('shorthand_file = "."', "is not a regular file"),
    ],
)
def test_hostile_values_in_a_config_file_are_refused_in_one_line(tmp_path: Path, table: str, problem: str) -> None:
    path = tmp_path / "hostile.toml"
    path.write_text(f"[linker]\n{table}\n")
    result = CliRunner().invoke(main, ["link", "--exact-only", "--config", str(path), "aspirin"])
    assert result.exit_code == 2, result.output
    assert problem in result.output and "Traceback" not in result.output


def test_a_config_that_is_no_regular_file_is_refused_not_read(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)  # reading it would wait for a writer forever
    result = CliRunner().invoke(main, ["link", "--exact-only", "--config", str(fifo), "aspirin"])
    assert result.exit_code == 2 and "not a regular file" in result.output
    big = tmp_path / "big.toml"
    big.write_text("[linker]\n" + "# padding\n" * 200_000)
    result = CliRunner().invoke(main, ["link", "--exact-only", "--config", str(big), "aspirin"])
    assert result.exit_code == 2 and "too large for a settings file" in result.output


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_threshold_that_is_no_finite_number_is_refused(value: str) -> None:
    result = CliRunner().invoke(main, ["link", "--exact-only", "--nil-threshold", value, "aspirin"])
    assert result.exit_code == 2 and "not a finite number" in result.output


def test_none_takes_a_files_value_back_and_the_old_entity_type_wins_over_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[linker]\nnil_threshold = 0.5\nnumber_margin = "None"\n')
    assert _choice("--config", str(path), "--nil-threshold", "none").settings().nil_threshold is None
    assert _choice("--config", str(path)).settings().number_margin is None  # any case of "none"


def test_an_unknown_kind_of_branch_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    for args in (["--branches", "DISEASES"], ["--branches", "Diseases"]):
        result = CliRunner().invoke(main, ["link", "--exact-only", *args, "aspirin"])
        assert result.exit_code == 2 and "no branches known for the kind" in result.output
        assert "mention\t" not in result.output  # no header before the refusal
    path = tmp_path / "b.toml"
    path.write_text('[linker]\nbranches = ["Diseases"]\n')
    result = CliRunner().invoke(main, ["link", "--exact-only", "--config", str(path), "aspirin"])
    assert result.exit_code == 2 and "b.toml" in result.output
    path.write_text('[linker]\nbranches = ["C"]\n')
    by_old_name = CliRunner().invoke(
        main, ["link", "--exact-only", "--config", str(path), "--entity-type", "Chemical", "aspirin"]
    )
    assert "MESH:D001241" in by_old_name.output  # the command line's kind, not the file's C


def test_annotate_reads_an_annotator_table_and_prints_both(tmp_path: Path) -> None:
    printed = CliRunner().invoke(main, ["annotate", "--print-config"]).output
    tables = tomllib.loads(printed)
    assert settings_of(AnnotatorConfig, tables["annotator"], where="printed") == AnnotatorConfig()
    assert "annotator" not in tomllib.loads(CliRunner().invoke(main, ["link", "--print-config"]).output)
    path = tmp_path / "a.toml"
    path.write_text("[annotator]\ncontext = false\n")
    text = "No myocardial infarction."
    from_file = CliRunner().invoke(main, ["annotate", "--exact-only", "--config", str(path), text])
    assert '"negated": false' in from_file.output
    overridden = CliRunner().invoke(main, ["annotate", "--exact-only", "--config", str(path), "--context", text])
    assert '"negated": true' in overridden.output  # the command line wins
    path.write_text("[annotator]\nmin_chars = 0\n")
    refused = CliRunner().invoke(main, ["annotate", "--exact-only", "--config", str(path), text])
    assert refused.exit_code == 2 and "min_chars: 0 is below the least allowed" in refused.output
