from pathlib import Path

import pytest

from support import FIXTURES


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow", action="store_true", help="Also run the tests marked slow (the README's test command and CI do)."
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without --slow, tests marked slow are deselected (not skipped): a local run takes about a quarter of
    the full suite's time (README)."""
    if config.getoption("--slow"):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session", autouse=True)
def isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Exported encoders and default indexes go to a fresh folder: tests never read a user's cache."""
    folder = tmp_path_factory.mktemp("medlink-cache")
    patch = pytest.MonkeyPatch()
    patch.setenv("MEDLINK_CACHE", str(folder))
    yield folder
    patch.undo()


@pytest.fixture(scope="session")
def encoder(isolated_cache: Path):
    """The packaged all-MiniLM-L6-v2 through ONNX Runtime: real weights, exported once per test session."""
    from medlink.encoders import load_encoder

    return load_encoder("minilm")
