"""A font's weight, slant and pitch, from its name and from its descriptor's flags.

Names say it in many dialects: "Helvetica-Bold" and "Arial,Bold" spell it out; TeX's fonts abbreviate
it (CMBX10 is Computer Modern bold extended, SFBX1000 its EC version, CMTT10 typewriter); URW's
Times clone calls its bold "NimbusRomNo9L-Medi" and its italic "NimbusRomNo9L-ReguItal". A subset
font carries a six-letter tag before a "+" ("ABCDEF+CMBX10"), which is not part of its name.

Where the name says nothing, the font descriptor may: its ``Flags`` (PDF 32000-1, table 123: bit 1
FixedPitch, bit 7 Italic, bit 19 ForceBold) and its ``FontWeight`` (400 regular, 700 bold).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Spelled-out weights from semibold up, and "Medi" only where it ends the name (URW's bold: "-Medi",
# "-MediItal"), not "Medium", which is a regular text weight.
_BOLD = re.compile(
    r"bold|black|heavy|[-,_ ]demi|medi(?:ital)?$"
    # TeX: Computer Modern / Latin Modern / EC bold (CMBX10, CMB10, CMSSBX10, SFBX1000, SFSX1000,
    # SFBI1000, ECBX1000) and the bold extended italic and slanted (CMBXTI10, CMBXSL10)
    r"|^(?:cm|ec|sf|lm)(?:bx|b\d|ssbx|sx|bi|xc)",
    re.IGNORECASE,
)
_ITALIC = re.compile(
    r"italic|oblique|ital$|ital[-,_ ]"
    # TeX: text italic, slanted, bold italic, sans italic, italic typewriter (CMTI10, CMSL10, SFTI1000,
    # SFSL1000, CMBXTI10, CMSSI10, CMITT10, SFBI1000, SFSI1000)
    r"|^(?:cm|ec|sf)(?:ti|sl|bxti|bxsl|ssi|itt|bi|si|so)\d",
    re.IGNORECASE,
)
_MONO = re.compile(
    r"mono|courier|consol|menlo|monaco|inconsolata|typewriter|code|fixed|nimbusmon"
    # TeX typewriter: CMTT10, CMSLTT10, CMITT10, SFTT1000, LMMono10
    r"|^(?:cm|ec|sf)(?:tt|sltt|itt|tcsc)\d",
    re.IGNORECASE,
)

FIXED_PITCH = 1 << 0  # descriptor flag bit 1
ITALIC_FLAG = 1 << 6  # bit 7
FORCE_BOLD = 1 << 18  # bit 19
BOLD_WEIGHT = 600  # FontWeight from semibold up


@dataclass(frozen=True, slots=True)
class FontStyle:
    bold: bool = False
    italic: bool = False
    mono: bool = False


def face_name(fontname: str) -> str:
    """The name after a subset tag: "ABCDEF+CMBX10" -> "CMBX10"."""
    tag, plus, rest = fontname.partition("+")
    return rest if plus and len(tag) == 6 and tag.isupper() else fontname


def font_style(fontname: str, flags: int = 0, weight: float = 0.0) -> FontStyle:
    """A font's style from its name, or failing that from its descriptor's flags and weight."""
    face = face_name(fontname)
    return FontStyle(
        bold=bool(_BOLD.search(face)) or bool(flags & FORCE_BOLD) or weight >= BOLD_WEIGHT,
        italic=bool(_ITALIC.search(face)) or bool(flags & ITALIC_FLAG),
        mono=bool(_MONO.search(face)) or bool(flags & FIXED_PITCH),
    )


RESOURCE_DEPTH = 3  # form XObjects inside form XObjects looked into for their fonts
Resolve = Callable[[object], object]
NameOf = Callable[[object], str]


def resource_styles(resources: object, resolve: Resolve, name_of: NameOf) -> dict[str, FontStyle]:
    """Each font a page's resources (or a form's they draw) name, by the name its glyphs report, with
    the style its name and descriptor give. ``resolve`` follows an indirect reference (pdfminer's
    ``resolve1``) and ``name_of`` reads a name object (``literal_name``): the caller's PDF reader's,
    so that this module reads plain dicts."""
    found: dict[str, FontStyle] = {}

    def visit(entry: object, depth: int) -> None:
        entry = resolve(entry)
        if not isinstance(entry, dict) or depth > RESOURCE_DEPTH:
            return
        fonts = resolve(entry.get("Font"))
        for ref in fonts.values() if isinstance(fonts, dict) else ():
            font = resolve(ref)
            if isinstance(font, dict) and font.get("BaseFont") is not None:
                name = name_of(resolve(font["BaseFont"]))
                found[name] = font_style(name, *_descriptor(font, resolve))
        xobjects = resolve(entry.get("XObject"))
        for ref in xobjects.values() if isinstance(xobjects, dict) else ():
            attrs = getattr(resolve(ref), "attrs", None)
            if isinstance(attrs, dict) and "Resources" in attrs:
                visit(attrs["Resources"], depth + 1)

    visit(resources, 0)
    return found


def _descriptor(font: dict[str, Any], resolve: Resolve) -> tuple[int, float]:
    """A font's descriptor ``Flags`` and ``FontWeight`` (a composite font's from its descendant)."""
    descriptor = resolve(font.get("FontDescriptor"))
    descendants = resolve(font.get("DescendantFonts"))
    if descriptor is None and isinstance(descendants, list) and descendants:
        descendant = resolve(descendants[0])
        descriptor = resolve(descendant.get("FontDescriptor")) if isinstance(descendant, dict) else None
    if not isinstance(descriptor, dict):
        return 0, 0.0
    flags, weight = resolve(descriptor.get("Flags", 0)), resolve(descriptor.get("FontWeight", 0))
    return (
        int(flags) if isinstance(flags, int | float) else 0,
        float(weight) if isinstance(weight, int | float) else 0.0,
    )
