# SPDX-License-Identifier: GPL-2.0-only
"""python3 tests/manpage.py options|keys MAN

Prints what man page MAN documents, one entry a line, as --help spells it:
  options   each tag of the OPTIONS section, e.g. "-d, --delay SECS"
  keys      each word of the tags of INTERACTIVE COMMANDS: "Ctrl-L", "click"
  columns SECTION   each name in the tags of SECTION (e.g. "GPU VIEW", or
                    "CONFIGURATION FILE": the settings file's keys)
so that tests/cli/cli.sh can compare them with --help and the code."""
import re
import shlex
import sys


def section(lines, name):
    out, on = [], False
    for line in lines:
        if line.startswith(".SH "):
            on = line[4:].strip().strip('"') == name
            continue
        if on:
            out.append(line)
    return out


def text(line):
    """The text of one roff line, fonts and escapes resolved."""
    m = re.match(r"^\.(B|I|BR|RB|BI|IB|IR|RI)\s+(.*)$", line)
    if m:
        args = shlex.split(m.group(2).replace("\\", "\\\\"))
        # .B and .I set their words in one font, joined by spaces; the
        # alternating macros join their arguments with nothing between.
        line = " ".join(args) if len(m.group(1)) == 1 else "".join(args)
    line = re.sub(r"\\f(\[[A-Z]*\]|\(..|.)", "", line)
    line = line.replace("\\-", "-").replace("\\(em", "-").replace("\\ ", " ").replace("\\&", "").replace("\\e", "\\")
    return re.sub(r"\s+", " ", line).strip()


def tags(lines):
    return [text(lines[i + 1]) for i, line in enumerate(lines[:-1]) if line.strip() == ".TP"]


def main(what, path, name=None):
    with open(path) as f:
        lines = f.read().split("\n")
    if what == "columns" and name:
        for tag in tags(section(lines, name)):
            for col in re.split(r",? (?:/ )?", tag):
                print(col)
    elif what == "options":
        for tag in tags(section(lines, "OPTIONS")):
            print(tag)
    elif what == "keys":
        for tag in tags(section(lines, "INTERACTIVE COMMANDS")):
            for key in tag.split(", "):
                for word in key.split():
                    print(word)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(*sys.argv[1:])
