"""medlink's span tagger (``medlink annotate`` uses it when installed), found by medlink through the
``medlink.models`` entry point."""

from importlib.resources import files
from pathlib import Path

__version__ = "0.3.1"


def model_folder() -> Path:
    return Path(str(files(__name__).joinpath("model")))
