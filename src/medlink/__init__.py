"""medlink: link free-text medical terms to terminology concepts.

Heavy dependencies (pyarrow, torch, faiss) are imported only by the modules that use them, so importing medlink
and running ``medlink --help`` stay instant.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
