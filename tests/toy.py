"""The toy corpus and golden set many tests share: three documents in three formats, three questions."""

from __future__ import annotations

CORPUS = {
    "a.md": "# Brakes\n\nDisc brakes need *new pads* at 1.5 mm.\n\n- check rotor\n- bleed yearly\n",
    "b.txt": "Tyre pressure for road bikes is 80 to 100 psi.\n\nGravel tyres run lower.\n",
    "sub/c.html": "<html><body><h1>Chains</h1><p>Replace a chain at 0.5% stretch.</p></body></html>",
}

GOLDEN = """
questions:
  - id: pads
    question: when do disc brake pads need replacing
    category: factual
    answers: [{doc: docs/a.md, quote: "Disc brakes need new pads at 1.5 mm."}]
  - id: pressure
    question: how hard should road tyres be pumped
    category: paraphrase
    answers: [{quote: "Tyre pressure for road bikes is 80 to 100 psi."}]
  - id: chain
    question: chain stretch limit
    category: identifier
    answers:
      - {doc: docs/sub/c.html, quote: "Replace a chain at 0.5% stretch."}
      - {doc: docs/a.md, quote: bleed yearly}
"""
