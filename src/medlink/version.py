"""medlink's version: the bottom of the house, so that stores and indexes can stamp it without importing medlink."""

__version__ = "0.1.0"
