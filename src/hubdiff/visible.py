"""Text from the Hub made visible: every character that a terminal or a browser would not show as itself.

Control characters (terminal escapes: screen clears, OSC 8 links, BEL), bidirectional overrides that
reorder what is read (U+202E), zero-width and other format characters, separators other than the
plain space, lone surrogates (from file names that are not UTF-8) and private-use or unassigned code
points are written as escapes (``\\x1b``, ``\\u202e``, ``\\U000e0041``). It is the one place that
decides what is visible; the terminal views, the markdown filters and the error lines all use it.
"""

from __future__ import annotations

import re
import unicodedata

# Letters that render as nothing (Hangul fillers, braille blank, Mongolian vowel separator) and the
# variation selectors, which are "printable" to Python but invisible to a reader.
_INVISIBLE = frozenset(
    [
        0x115F,
        0x1160,
        0x17B4,
        0x17B5,
        0x180E,
        0x2800,
        0x3164,
        0xFFA0,
        *range(0xFE00, 0xFE10),
        *range(0xE0100, 0xE01F0),
    ]
)


_INVISIBLE_RE = re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(_INVISIBLE)) + "]")
# every one of them is beyond ASCII; the regex scans ~2 MB/s, so ASCII text is not searched at all


def _no_invisible(text: str) -> bool:
    return text.isascii() or not _INVISIBLE_RE.search(text)


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _shown(ch: str) -> str:
    return ch if ch.isprintable() and ord(ch) not in _INVISIBLE else _escape(ch)


# scheme://userinfo@ up to the authority's last "@" (a password may hold one): the one rule by which a
# credential in any URL hubdiff writes (an endpoint, a redirect target, a proxy) becomes "***"
_USERINFO = re.compile(r"\b([A-Za-z][A-Za-z0-9+.\-]*://)[^/?#\s]*@")


def redacted(text: str) -> str:
    """``text`` with the user name and password of every URL in it written as ``***``."""
    return _USERINFO.sub(r"\1***@", text) if "@" in text and "://" in text else text


def printable(value: object) -> str:
    """``value`` as one line of text with every invisible character (line breaks too) escaped, and
    every URL's credentials redacted (``redacted``): error lines and notices all come through here."""
    text = redacted(str(value))
    if text.isprintable() and _no_invisible(text):
        return text
    return "".join(map(_shown, text))


def printable_lines(text: str) -> str:
    """A whole document (report, table) made visible, its line breaks kept."""
    return "\n".join(map(printable, text.split("\n")))


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def printable_json(text: str) -> str:
    """JSON text made visible the way JSON allows: every invisible character as a ``\\uXXXX`` escape.

    Only valid inside JSON strings, where the writer put any such character (between them a JSON
    text holds printable ASCII and line breaks, which are kept).
    """
    # line breaks are kept, so they must not send a 20 MB document (a --json snapshot, which ends in
    # one) through the character-by-character path below (15 s for 199,680 tensors)
    if text.replace("\n", "").isprintable() and _no_invisible(text):
        return text
    return "".join(
        ch if ch == "\n" or (ch.isprintable() and ord(ch) not in _INVISIBLE) else _json_escape(ch)
        for ch in text
    )


def _lookalike_prone(ch: str) -> bool:
    """A character that can pass for another: a letter, mark or digit beyond ASCII (a Cyrillic о, a
    combining accent that normalisation would merge) or a fullwidth or CJK form (ｗ, ．, 。). Symbols
    such as hubdiff's own arrows and signs are not names' stuff and are left alone."""
    code = ord(ch)
    return code > 0x7F and (
        unicodedata.category(ch)[0] in "LMN" or 0xFF00 <= code <= 0xFFEF or 0x3000 <= code <= 0x303F
    )


def ascii_form(value: object) -> str | None:
    """``value`` written in ASCII (every other character escaped, ``\\u043e``), when it holds a character
    that could pass for another (``_lookalike_prone``); None when what it shows is what it is."""
    text = printable(value)
    if text.isascii() or not any(map(_lookalike_prone, text)):
        return None
    return "".join(ch if ch.isascii() else _escape(ch) for ch in text)


def named(value: object) -> str:
    """A name from the Hub (a tensor, a config key) as reports show it: printable, and followed by its
    ASCII form when it has one, so that two names that read the same can be told apart."""
    form = ascii_form(value)
    text = printable(value)
    return text if form is None else f"{text} ({form})"
