"""Headings in the layout parser (issue 31): weight read from TeX's and URW's font names and from the
font descriptor's flags, sizes just above the body's, a heading run in at the start of its paragraph,
and captions and code that are no headings. Rules on hand-placed words, then a paper drawn by
reportlab, the parse suite's case (``clear_rag.eval.drawn.papers.paper``)."""

from __future__ import annotations

import pytest

from clear_rag.eval.drawn.papers import paper
from clear_rag.parse.layout.blocks import elements_from_groups, group_lines
from clear_rag.parse.layout.fonts import FIXED_PITCH, FORCE_BOLD, font_style
from clear_rag.parse.layout.geometry import Line, Word
from clear_rag.parse.layout.headings import is_heading, run_in
from clear_rag.parse.layout.parser import LayoutPdfParser
from tests.parse.drawn import draw
from tests.parse.test_layout_rules import BODY, line, words
from tests.parse.test_parse_properties import check_blocks


@pytest.mark.parametrize(
    "name",
    ["CMBX10", "ABCDEF+CMBX12", "SFBX1000", "CMSSBX10", "CMB10", "NimbusRomNo9L-Medi",
     "NimbusRomNo9L-MediItal", "Arial-BoldMT", "Arial,Bold", "TimesNewRomanPS-BoldMT", "Helvetica-Black",
     "MinionPro-Semibold", "LMRoman10-Bold", "ITCAvantGarde-Demi"],
)  # fmt: skip
def test_bold_fonts_by_name(name: str) -> None:
    assert font_style(name).bold


@pytest.mark.parametrize(
    "name",
    ["CMR10", "SFRM1000", "NimbusRomNo9L-Regu", "Roboto-Medium", "Helvetica", "CMTT10", "ABCDEF+CMBXX"[:0]],
)
def test_regular_fonts_by_name(name: str) -> None:
    assert not font_style(name).bold


def test_weight_slant_and_pitch_from_the_descriptor_where_the_name_says_nothing() -> None:
    assert font_style("F37", flags=FORCE_BOLD).bold
    assert font_style("F37", weight=700).bold and not font_style("F37", weight=400).bold
    assert font_style("F12", flags=FIXED_PITCH).mono
    for name in ("NimbusRomNo9L-ReguItal", "CMTI10", "SFTI1000", "Arial-ItalicMT", "CMBXTI10"):
        assert font_style(name).italic, name
    for name in ("CMTT10", "SFTT1000", "Courier-Bold", "DejaVuSansMono", "SourceCodePro-Regular"):
        assert font_style(name).mono, name
    assert not font_style("CMR10").italic and not font_style("CMR10").mono


def test_a_heading_just_larger_than_the_body_and_captions_and_code_that_are_not() -> None:
    assert is_heading([line("Results", size=11)], BODY)  # 1.1 times the body: LaTeX's \large
    assert not is_heading([line("Results", size=10.2)], BODY)  # a rounding difference
    assert not is_heading([line("Figure 3: The retriever and the reader.", bold=True)], BODY)
    assert not is_heading([line("Figure 3-1 Overview of the system", bold=True)], BODY)
    assert not is_heading([line("Table 2. Results by year", size=12)], BODY)
    mono = Line(
        tuple(
            Word(w.text, w.x0, w.x1, w.top, w.bottom, w.size, True, mono=True)
            for w in words("$ make install", 72, 100)
        )
    )
    assert not is_heading([mono], BODY)


def test_a_run_in_heading_is_cut_from_its_paragraph_and_bold_words_inside_text_are_not() -> None:
    head = words("3.1 Overview", 72, 100, bold=True) + words("Our dense passage retriever", 140, 100)
    found = run_in(Line(tuple(head)))
    assert found is not None and (found[0].text, found[1].text) == (
        "3.1 Overview",
        "Our dense passage retriever",
    )
    lead = words("Overview.", 72, 100, bold=True) + words("The retriever", 130, 100)
    assert run_in(Line(tuple(lead))) is not None
    emphasis = words("Revenue", 72, 100, bold=True) + words("grew in every region", 120, 100)
    assert run_in(Line(tuple(emphasis))) is None  # no number, no full stop: emphasis, not a heading
    item = (
        words("•", 72, 100) + words("Cybersecurity:", 84, 100, bold=True) + words("provides tools", 170, 100)
    )
    assert run_in(Line(tuple(item))) is None  # a list item's bold lead-in stays in its item
    whole = words("3.1 Overview", 72, 100, bold=True)
    assert run_in(Line(tuple(whole))) is None  # a whole bold line is a heading line already
    lines = [Line(tuple(head)), line("and it goes on to the next line of the paragraph.", y=112)]
    found_elements = elements_from_groups(group_lines(lines, BODY, 2.0), BODY)
    assert [(e.kind, e.text) for e in found_elements] == [
        ("heading", "3.1 Overview"),
        ("paragraph", "Our dense passage retriever and it goes on to the next line of the paragraph."),
    ]
    # a bold phrase wrapped onto the next line of a sentence is no run-in heading
    wrapped = [
        line("Laws on competition and technology platforms' business", y=100),
        Line(tuple(words("practices:", 72, 112, bold=True) + words("Laws and regulations", 130, 112))),
    ]
    found_elements = elements_from_groups(group_lines(wrapped, BODY, 2.0), BODY)
    assert [e.kind for e in found_elements] == ["paragraph"]


def test_a_paper_in_tex_fonts_gets_every_heading_at_its_level_and_no_caption_or_code_among_them() -> None:
    drawn = draw(paper)
    parsed = LayoutPdfParser().parse(drawn.pdf, source="paper.pdf")
    check_blocks(parsed)
    blocks = [(b.kind, b.level, parsed.text[b.start : b.end]) for b in parsed.blocks]
    assert [(text, level) for kind, level, text in blocks if kind == "heading"] == drawn.headings
    paragraphs = [text for kind, _, text in blocks if kind == "paragraph"]
    assert any(text.startswith("Our dense passage retriever encodes") for text in paragraphs)
    assert drawn.of("caption")[0] in paragraphs
    code = "\n".join(text for kind, _, text in blocks if kind == "code")
    assert code.splitlines() == drawn.of("code")
    body = " ".join(text for kind, _, text in blocks if kind == "paragraph")
    assert all(line in body for line in drawn.body)
