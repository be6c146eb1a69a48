"""The models medlink knows, where each comes from and whether it is installed (``medlink models``).

medlink's own encoders for English ship inside the core package; the Chinese encoder and the trial matcher are
distributions of their own (``medlink-zh``, ``medlink-trial-matcher``, built from ``packages/`` in the repository),
installed on purpose through the extras ``medlink[zh]`` and ``medlink[trials]`` and found through the
``medlink.models`` entry-point group, which any other package may also use to offer a model to medlink.
"""
