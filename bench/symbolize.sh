#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Symbolizing a large C++ library's stacks: xputop's symbolizer against
# `addr2line -f -C`.
#
#   bench/symbolize.sh [BUILD_DIR]    (LIB=path STACKS=100 DEPTH=24 ROUNDS=3; no root needed)
#
# LIB defaults to the largest libLLVM or libclang shared library on the
# machine.  bench/symbench maps it, picks STACKS call paths of DEPTH frames
# through its functions (stacks share callers, as real ones do) and
# symbolizes every frame through core/symbols/symbolize.h as xputop does a sample:
# cold (new symbolizer: maps, the ELF symbol table, demangling), warm (the
# same stacks again) and warm with new addresses in the same functions.
# addr2line gets the same frames' addresses: cold is one run over them, warm
# is what a second pass over them costs in the same process (a run over the
# list twice, less a run over it once).  Agreement: the share of frames for
# which both give the same function name.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
OUT=${1:-build}
STACKS=${STACKS:-100}
DEPTH=${DEPTH:-24}
ROUNDS=${ROUNDS:-3}
TMP=$(mktemp -d /tmp/xputop-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

if [ -z "${LIB:-}" ]; then
	LIB=$(find / -xdev \( -name 'libLLVM*.so*' -o -name 'libclang*.so*' \) -type f -size +10M \
		-printf '%s %p\n' 2> /dev/null | sort -n | tail -1 | cut -d' ' -f2-)
fi
[ -n "$LIB" ] && [ -r "$LIB" ] || { echo "bench: no libLLVM or libclang found: give LIB=path" >&2; exit 1; }
echo "== $LIB ($(($(stat -c %s "$LIB") / 1048576)) MB), $STACKS stacks of $DEPTH frames, $ROUNDS rounds"
cat "$LIB" > /dev/null	# both read it from the page cache

: > "$TMP/sym"
for r in $(seq 1 "$ROUNDS"); do
	"$OUT/bench/symbench" "$LIB" "$STACKS" "$DEPTH" "$TMP/addrs" "$TMP/names" >> "$TMP/sym"
	tail -1 "$TMP/sym"
done
frames=$(awk '{ print $2; exit }' "$TMP/sym")
cold=$(awk '{ print $6 }' "$TMP/sym" | median)
warm=$(awk '{ print $8 }' "$TMP/sym" | median)
wnew=$(awk '{ print $10 }' "$TMP/sym" | median)

cat "$TMP/addrs" "$TMP/addrs" > "$TMP/addrs2"
set -- $(timed sh -c "addr2line -f -C -e '$LIB' < $TMP/addrs > $TMP/a2l")
a_cold=$1
set -- $(timed sh -c "addr2line -f -C -e '$LIB' < $TMP/addrs2 > /dev/null")
a_warm=$(awk -v two="$1" -v one="$a_cold" 'BEGIN { print two - one }')
awk 'NR % 2' "$TMP/a2l" > "$TMP/a2l.names"
agree=$(paste "$TMP/names" "$TMP/a2l.names" | awk -F'\t' '$1 == $2 { s++ } END { print 100 * s / NR }')

echo
printf '%-30s %12s %12s %16s\n' "" "cold (s)" "warm (s)" "warm lookups/s"
printf '%-30s %12.4f %12.6f %16.0f\n' "xputop symbolizer" "$cold" "$warm" "$(awk -v n="$frames" -v t="$warm" 'BEGIN { print n / t }')"
printf '%-30s %12s %12.6f %16.0f\n' "  new addresses, same file" "" "$wnew" "$(awk -v n="$frames" -v t="$wnew" 'BEGIN { print n / t }')"
printf '%-30s %12.4f %12.4f %16.0f\n' "addr2line -f -C" "$a_cold" "$a_warm" "$(awk -v n="$frames" -v t="$a_warm" 'BEGIN { print n / t }')"
# Where the names differ: the same address under another name (aliases,
# e.g. identical functions folded by the linker), or the same name spelt
# by another demangler (libstdc++'s against binutils').
nm -C --defined-only "$LIB" > "$TMP/nm"
paste "$TMP/names" "$TMP/a2l.names" > "$TMP/pairs"
set -- $(python3 -c '
import sys
at = {}
for line in open(sys.argv[1], errors="replace"):
    parts = line.rstrip("\n").split(" ", 2)
    if len(parts) == 3:
        at.setdefault(parts[2], set()).add(parts[0])
n = same = alias = spelt = 0
for line in open(sys.argv[2], errors="replace"):
    a, b = line.rstrip("\n").split("\t")
    n += 1
    if a == b:
        same += 1
    elif at.get(a, set()) & at.get(b, set()):
        alias += 1
    elif a.translate({ord(c): None for c in " ()"}) == b.translate({ord(c): None for c in " ()"}):
        spelt += 1
    else:
        print("  xputop:    %s\n  addr2line: %s" % (a[:150], b[:150]), file=sys.stderr)
print(100 * same / n, 100 * alias / n, 100 * spelt / n)' "$TMP/nm" "$TMP/pairs" 2> "$TMP/other")
agree=$1 alias=$2 spelt=$3
echo "same function name for $(fmt %.2f "$agree")% of $frames frames; aliases of the same address $(fmt %.2f "$alias")%;"
echo "the same name spelt by another demangler $(fmt %.2f "$spelt")%; other $(fmt %.2f "$(awk -v a="$agree" -v b="$alias" -v c="$spelt" 'BEGIN { print 100 - a - b - c }')")%:"
head -6 "$TMP/other"

row "symbolize $frames frames of $(basename "$LIB" | cut -c1-14), cold (s)" "$(fmt %.3f "$cold")" "addr2line $(fmt %.2f "$a_cold")" \
	"x$(fmt %.4f "$(awk -v a="$cold" -v b="$a_cold" 'BEGIN { print a / b }')")" "$(verdict "$cold" le "$a_cold")"
row "symbolize, warm lookups/s (cached; new addresses)" \
	"$(fmt %.3g "$(awk -v n="$frames" -v t="$warm" 'BEGIN { print n / t }')"); $(fmt %.3g "$(awk -v n="$frames" -v t="$wnew" 'BEGIN { print n / t }')")" \
	"addr2line $(fmt %.3g "$(awk -v n="$frames" -v t="$a_warm" 'BEGIN { print n / t }')")" \
	"x$(fmt %.0f "$(awk -v a="$wnew" -v b="$a_warm" 'BEGIN { print b / a }')") (new addresses)" "$(verdict "$wnew" le "$a_warm")"
other=$(awk -v a="$agree" -v b="$alias" -v c="$spelt" 'BEGIN { print 100 - a - b - c }')
row "symbolize, same name as addr2line (%)" "$(fmt %.2f "$agree"); +$(fmt %.2f "$alias") aliases, +$(fmt %.2f "$spelt") spelling" \
	"goal: other 0" "other $(fmt %.2f "$other")%" "$(verdict "$other" lt 0.005)"
