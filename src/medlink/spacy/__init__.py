"""medlink in a spaCy pipeline: ``nlp.add_pipe("medlink_linker")`` after ``pip install 'medlink[spacy]'``.

The factory is registered through the ``spacy_factories`` entry point, so spaCy finds it without an import.
"""
