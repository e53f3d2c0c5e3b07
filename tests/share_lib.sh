# SPDX-License-Identifier: GPL-2.0-only
# Sourced by the several-xputops suites (tests/bpf/share_needs.sh,
# share_pace.sh) after tests/lib.sh: two busy programs (B1, B2), the GPU
# stand-in, and helpers that start, stop and query batch xputops.
Q="python3 tests/jsonq.py"
FAKE=$(public "$OUT/tests/libxputop_inject_fake.so")
STANDIN=$(public "$OUT/tests/progs/gpu_standin")
BUSY=$OUT/tests/progs/busy
"$BUSY" 300 > /dev/null 2>&1 &
B1=$!
"$BUSY" 300 > /dev/null 2>&1 &
B2=$!
J="python3 -c"

# xrun NAME ARGS...: an xputop in batch JSON mode, its output in $T_TMP/NAME.json, stderr in NAME.err.
xrun() {
	n=$1
	shift
	"$XPUTOP" -b -j -d 0.5 "$@" > "$T_TMP/$n.json" 2> "$T_TMP/$n.err" &
	eval "P_$n=\$!"
}
# xstop NAME: ends it; its exit status must be 143 (128 + SIGTERM: a clean end by that signal).
xstop() {
	eval "p=\$P_$1"
	kill "$p" 2> /dev/null
	wait "$p"
	rc=$?
	[ "$rc" -eq 143 ] || fail "xputop $1 exited $rc: $(tail -3 "$T_TMP/$1.err")"
}
# last NAME PYEXPR: PYEXPR (on s, the last snapshot; S, all) holds, else fails with what it saw.
last() { holds "$1" "$2" || fail "$1: $2 does not hold"; }
# holds NAME PYEXPR: last's check, which only says (status, and what it saw on stderr).
holds() {
	python3 - "$T_TMP/$1.json" "$2" <<-'PY'
	import json, sys
	S = []
	for l in open(sys.argv[1]):
	    try:
	        S.append(json.loads(l))
	    except ValueError:	# the line being written
	        pass
	s = S[-1] if S else {}
	ok = bool(S) and eval(sys.argv[2])
	if not ok:
	    print("  saw:", json.dumps({k: s.get(k) for k in ("source", "collection", "cpu_info")}), file=sys.stderr)
	sys.exit(0 if ok else 1)
	PY
}
# within SECS CMD...: until CMD succeeds, at most SECS s (a check follows).
within() {
	w=$(($1 * 5))
	shift
	until "$@" > /dev/null 2>&1 || [ "$w" -le 0 ]; do
		sleep 0.2
		w=$((w - 1))
	done
}
