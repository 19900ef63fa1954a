"""How well a parser recovered a document: words, reading order, table cells and page furniture.

Every metric compares a parse with a ground truth (``Truth``: the visible text in reading order, the
tables cell by cell, and the running headers, footers and page numbers that must not reach the body)
through one tokenisation (``tokens``). Each returns its counts, not only a ratio, so scores over
several documents are micro averages: the counts are summed, then divided (``DocumentScore.plus``).

The parse's body is what the chunkers cut chunks from: its text before the first ``furniture`` block
(``body``), where a parser puts running headers, footers and page numbers.

One module per metric (``words``, ``order``, ``cells``, ``rows``, ``furniture``), each over ``tokens``;
``truth`` reads a ground truth file (the format anyone can write for their own PDFs); ``document``
scores one parse against its truth with all of them.
"""
