# SPDX-License-Identifier: GPL-2.0-only
# Rust programs sampled for real: their functions named from both of rustc's
# symbol manglings (legacy, the default, and v0), demangled in the JSON
# output.  Needs root and rustc (.ci/setup installs Debian's).
. tests/lib.sh
need_root
Q="python3 tests/jsonq.py"
if ! command -v rustc > /dev/null 2>&1; then
	echo "FAIL $(basename "$0"): rustc is missing: run .ci/setup" >&2
	exit 1
fi

# sample MANGLING [RUSTC FLAGS]: builds tests/progs/rust_spin.rs with them,
# runs it for 6 s and samples it into $T_TMP/MANGLING.json; prints its pid.
sample() {
	m=$1
	shift
	rustc -C opt-level=1 -C force-frame-pointers=yes "$@" tests/progs/rust_spin.rs -o "$T_TMP/rs_$m" \
		2> "$T_TMP/$m.rustc" || { fail "rustc failed: $(cat "$T_TMP/$m.rustc")"; return; }
	"$T_TMP/rs_$m" 6 > /dev/null &
	pid=$!
	"$XPUTOP" -b -j -n 2 -p $pid > "$T_TMP/$m.json" 2> "$T_TMP/$m.err" || fail "xputop failed: $(cat "$T_TMP/$m.err")"
	kill $pid 2> /dev/null
	wait $pid 2> /dev/null
}

t legacy_mangled_rust_functions_are_demangled
sample legacy
$Q stack_has $pid rust_spin::main rust_spin::spin_outer rust_spin::work::spin_leaf < "$T_TMP/legacy.json" ||
	fail "the call path, demangled"

t v0_mangled_rust_functions_are_demangled_with_their_generic_arguments
sample v0 -C symbol-mangling-version=v0
$Q stack_has $pid rust_spin::main rust_spin::spin_outer "rust_spin::work::spin_leaf::<rust_spin::work::Mixer>" \
	< "$T_TMP/v0.json" || fail "the call path, demangled"

finish
