"""medlink's embedded default, prebuilt (its index and compiled MeSH), found by medlink through the
``medlink.models`` entry point; scripts/build_default_index_package.py in medlink's repository writes ``data/``."""

from importlib.resources import files
from pathlib import Path

__version__ = "0.2.0"


def data_folder() -> Path:
    return Path(str(files(__name__).joinpath("data")))
