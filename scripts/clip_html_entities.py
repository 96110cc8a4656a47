#!/usr/bin/env python3
"""Writes src/clip/html_entities.inc: the HTML5 character references that CLIP's text cleaning
(src/clip/text_clean.cc, ftfy's html.unescape step) decodes.

Source: Python's standard library, which ships the WHATWG HTML5 named character reference table
(html.entities.html5) and the numeric-reference fixes of HTML5's tokenizer (html._invalid_charrefs,
html._invalid_codepoints). Nothing is downloaded.

Run from the repository root, then check that only intended lines changed:
    python3 scripts/clip_html_entities.py > src/clip/html_entities.inc
    git diff --stat src/clip/html_entities.inc
`--check FILE` compares FILE with what this script writes, except the first line (which names the
Python version), and prints the differences; ctest runs it as clip_html_entities_generated.

C string escaping: '"' and '\\' with a backslash; characters str.isprintable() accepts as UTF-8;
every other character (controls, C1 controls, non-breaking and zero-width spaces...) as octal
escapes of its UTF-8 bytes, so the file shows no invisible characters.
"""
import difflib
import html
import html.entities
import io
import sys


def c_string(text):
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:
            out.extend("\\%03o" % b for b in ch.encode("utf-8"))
    return '"' + "".join(out) + '"'


def generate(out):
    w = out.write
    version = "%d.%d" % sys.version_info[:2]
    w("// Generated from the WHATWG HTML5 named character reference table as shipped in Python %s's\n" % version)
    w("// html.entities.html5 (and html._invalid_charrefs / html._invalid_codepoints) by:\n")
    w("//   python3 scripts/clip_html_entities.py > src/clip/html_entities.inc (see docs/clip.md, \"HTML entities\").\n")
    w("// Names include the trailing ';' where the table has it; legacy names also appear without it.\n")
    w("// Sorted by name (bytewise) for binary search.\n")
    w("struct NamedEntity { const char* name; const char* value; };\n")
    w("constexpr NamedEntity kNamedEntities[] = {\n")
    for name in sorted(html.entities.html5, key=lambda n: n.encode("utf-8")):
        w("    {%s, %s},\n" % (c_string(name), c_string(html.entities.html5[name])))
    w("};\n")
    w("// Numeric references that HTML5 remaps (mostly cp1252 for 0x80-0x9F).\n")
    w("struct CharRefFix { uint32_t code; const char* value; };\n")
    w("constexpr CharRefFix kInvalidCharRefs[] = {\n")
    for code in sorted(html._invalid_charrefs):
        w("    {0x%X, %s},\n" % (code, c_string(html._invalid_charrefs[code])))
    w("};\n")
    w("// Numeric references that decode to nothing.\n")
    w("constexpr uint32_t kInvalidCodepoints[] = {\n")
    codes = sorted(html._invalid_codepoints)
    for i in range(0, len(codes), 8):
        w("    " + ", ".join("0x%X" % c for c in codes[i:i + 8]) + ",\n")
    w("};\n")


def main(argv):
    if len(argv) == 3 and argv[1] == "--check":
        generated = io.StringIO()
        generate(generated)
        with open(argv[2], encoding="utf-8") as f:
            committed = f.read().splitlines(keepends=True)[1:]
        expected = generated.getvalue().splitlines(keepends=True)[1:]
        if committed != expected:
            sys.stdout.writelines(difflib.unified_diff(committed, expected, argv[2], "generated"))
            return 1
        return 0
    if len(argv) != 1:
        sys.stderr.write("usage: clip_html_entities.py [--check FILE]\n")
        return 2
    generate(sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
