# SPDX-License-Identifier: GPL-2.0-only
# Symbolizing never stalls the ingest path (issue 12): a process runs code
# spread over a generated library the size of libtorch_cpu.so's symbol table
# (400,000 functions, 72 MB of long C++ names: more than the ELF cache's
# budget if names were copied) while xputop samples every CPU at 999 Hz.
# Snapshots come on time, the samples are named from the library, and memory
# stays bounded.  Needs root.
. tests/lib.sh
need_root
LIB=$T_TMP/libbigsym.so
if ! python3 tests/bigsym.py | as -o "$T_TMP/big.o" - || ! ld -shared -o "$LIB" "$T_TMP/big.o"; then
	echo "FAIL cannot generate the library (python3, as, ld)" >&2
	exit 1
fi
rm -f "$T_TMP/big.o"

"$OUT/tests/progs/bigsym_caller" "$LIB" 16 &
C=$!
"$XPUTOP" -b -j -F 999 -d 0.5 -n 26 -p $C --export -o "$T_TMP" > "$T_TMP/big.json" 2> "$T_TMP/big.err"
rc=$?
wait $C

t snapshots_stay_on_time_while_a_huge_library_is_symbolized
[ $rc -eq 0 ] || fail "xputop exited with $rc: $(cat "$T_TMP/big.err")"
python3 - "$T_TMP/big.json" <<'PY' || fail "a snapshot came late"
import json, sys
snaps = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
gaps = [(b["mono_ns"] - a["mono_ns"]) / 1e9 for a, b in zip(snaps, snaps[1:])]
print(f"  {len(snaps)} snapshots, gaps {min(gaps):.3f} to {max(gaps):.3f} s (refresh 0.5 s)")
sys.exit(len(snaps) < 26 or max(gaps) > 1.0)
PY

t the_samples_are_named_from_the_library
F=$(ls "$T_TMP"/xputop-cpu-*.folded 2> /dev/null | head -1)
[ -n "$F" ] || fail "no export written: $(cat "$T_TMP/big.err")"
# The leaf of every sample in the library: its function's name (demangled),
# or the "libbigsym.so+0x..." a frame shows until its name is known.
awk '{ n = split($0, f, ";"); leaf = f[n]; sub(/ [0-9]+$/, "", leaf); c = $NF
       if (leaf ~ /method_with_a_long_and_descriptive_name/) named += c
       else if (leaf ~ /libbigsym/) unnamed += c }
     END { printf "  %d samples named in the library, %d not\n", named, unnamed
           exit !(named >= 1000 && unnamed <= named / 100) }' "${F:-/dev/null}" ||
	fail "samples in the library are not named"
grep -q "xputop::generated_code_namespace::AnotherNestedScopeForLength::module_" "${F:-/dev/null}" ||
	fail "the names are not demangled"

t memory_stays_bounded
python3 - "$T_TMP/big.json" <<'PY' || fail "xputop's memory is not bounded"
import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
rss = last["memory"]["rss_kb"]
print(f"  RSS {rss // 1024} MB, ELF cache {last['memory']['elf_cache_kb'] // 1024} MB")
sys.exit(rss > 300 * 1024)
PY
finish
