"""A first use as a person meets it: the README's lines in a script file with no ``__main__`` guard, or piped to
``python -``, on an empty cache — for every way in (``medlink.link``, ``Linker.load()``, ``annotate``, spaCy,
Spark on ``local[2]``). Each must answer once: nothing may re-run the caller's script (multiprocessing's spawn did,
and hung on the cache lock) or build what the prebuilt default ships."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from medlink.linking.prebuilt import NO_PREBUILT

FIRST_USES = {
    "medlink.link": """
        import medlink
        r = medlink.link("heart attack")
        print("ANSWER", r.concept_id)
    """,
    "Linker.load": """
        from medlink import Linker
        result = Linker.load().link("myocardial infarctoin")
        print("ANSWER", result.concept_id, result.stage.value)
    """,
    "annotate": """
        from medlink import Linker
        found = Linker.load().annotate("No evidence of myocardial infarction.")
        print("ANSWER", [(a.text, a.concepts, a.negated) for a in found])
    """,
    "spaCy": """
        import spacy
        nlp = spacy.blank("en")
        nlp.add_pipe("medlink_annotator", config={"entity_type": "Disease", "tagger": "none"})
        print("ANSWER", [(ent.text, ent._.concepts) for ent in nlp("She had a heart attack last year.").ents])
    """,
    "Spark": """
        from pyspark.sql import SparkSession
        from medlink.spark import link_column
        spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
        df = spark.createDataFrame([("heart attack",), ("myocardial infarctoin",)], ["condition"])
        print("ANSWER", sorted(row.concept_id for row in link_column(df, "condition").collect()))
        spark.stop()
    """,
}
EXPECTED = {
    "medlink.link": "ANSWER MESH:D009203",
    "Linker.load": "ANSWER MESH:D009203 dense",
    "annotate": "ANSWER [('myocardial infarction', ('MESH:D009203',), True)]",
    "spaCy": "ANSWER [('heart attack', ('MESH:D009203',))]",
    "Spark": "ANSWER ['MESH:D009203', 'MESH:D009203']",
}


def run_as_user(code: str, how: str, folder: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``code`` run as a script file or from standard input, in an empty folder and with an empty cache."""
    script = textwrap.dedent(code)
    (folder / "first_try.py").write_text(script)
    command = [sys.executable, "first_try.py"] if how == "file" else [sys.executable, "-"]
    # PYSPARK_PYTHON: Spark's workers run this interpreter, as they would in a user's activated virtualenv
    environment = {**os.environ, "MEDLINK_CACHE": str(folder / "cache"), "PYSPARK_PYTHON": sys.executable, **env}
    if NO_PREBUILT not in env:
        environment.pop(NO_PREBUILT, None)
    return subprocess.run(
        command,
        input=None if how == "file" else script,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=folder,
        env=environment,
    )


@pytest.mark.slow  # a fresh interpreter each (a few seconds; Spark about 20)
@pytest.mark.parametrize("how", ["file", "stdin"])
@pytest.mark.parametrize("way", list(FIRST_USES))
def test_a_first_use_answers_once_from_an_unguarded_script(tmp_path: Path, way: str, how: str) -> None:
    done = run_as_user(FIRST_USES[way], how, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    answers = [line for line in done.stdout.splitlines() if line.startswith("ANSWER")]
    assert answers == [EXPECTED[way]]
    assert built_in(tmp_path / "cache") == []  # the prebuilt default was opened: nothing encoded or compiled


def built_in(cache: Path) -> list[str]:
    """What a first use built into ``cache`` beyond binding the prebuilt index to all of MeSH (``indexes/mesh-*``)
    and saving the encoder's graph with its weights in a mapped file (``onnx-mapped/``: a second, no encoding): an
    exported encoder, a compiled terminology, an encoded index."""
    found = [path for path in cache.glob("*/*") if not path.name.startswith(".")]
    return sorted(
        str(path.relative_to(cache))
        for path in found
        if not (path.parent.name == "indexes" and path.name.startswith("mesh-")) and path.parent.name != "onnx-mapped"
    )


@pytest.mark.slow  # compiles all of MeSH (about 40 s)
def test_compiling_on_first_use_from_an_unguarded_script_does_not_run_it_again(tmp_path: Path) -> None:
    """Without the prebuilt package, the first use compiles the 323k supplementary records, normalizing their names
    in worker processes: those must not import the caller's script (they did, and waited on its cache lock)."""
    code = """
        import sys
        print("script started", file=sys.stderr)
        from medlink import Linker
        print("ANSWER", Linker.load(exact_only=True).link("dostarlimab").concept_id)
    """
    done = run_as_user(code, "stdin", tmp_path, **{NO_PREBUILT: "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert [line for line in done.stdout.splitlines() if line.startswith("ANSWER")] == ["ANSWER MESH:C000719628"]
    assert done.stderr.count("script started") == 1
    assert (tmp_path / "cache" / "terminologies").is_dir()  # compiled here, not taken from the package
