"""Annotating running text: every concept mention of a document found, linked and qualified (negated, uncertain),
as QuickUMLS, MedCAT and Gilda's ``annotate`` do. Spans come from the terminology's names and the document's own
abbreviation definitions; each is linked by the linker with the document as context; ConText-style triggers say
whether the text denies or doubts it."""
