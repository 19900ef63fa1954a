"""The ``layout`` PDF backend: reading order, headings, lists, tables and page furniture inferred
from glyph geometry (``parser.LayoutPdfParser``). One rule per small function, thresholds relative
to the page: its body font size, line height and width.
"""
