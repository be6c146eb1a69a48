"""Vector indexes: encoded terminology names (and training mentions) searchable by cosine similarity."""

from medlink.index.build import build_index
from medlink.index.entries import MENTIONS, ONTOLOGY, IndexEntry, mention_entries, ontology_entries
from medlink.index.update import add_entries
from medlink.index.vector_index import Hit, IndexFileError, VectorIndex
from medlink.index.with_mentions import index_with_mentions, with_mentions_path

__all__ = [
    "MENTIONS",
    "ONTOLOGY",
    "Hit",
    "IndexEntry",
    "IndexFileError",
    "VectorIndex",
    "add_entries",
    "build_index",
    "index_with_mentions",
    "mention_entries",
    "ontology_entries",
    "with_mentions_path",
]
