from pathlib import Path

import pytest

from support import FIXTURES


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
