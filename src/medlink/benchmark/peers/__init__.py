"""The peers, run side by side with medlink in ``medlink benchmark`` (issue 40): Gilda, QuickUMLS and scispaCy's
linker, each the real package, given the dataset's terminology and run in a process of its own (which may be
another virtualenv's Python: scispaCy's ``nmslib`` pins numpy below 2), so that start-up, speed and peak memory
are measured alike for every row, medlink's included."""
