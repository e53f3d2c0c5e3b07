# SPDX-License-Identifier: GPL-2.0-only
# Sourced by the fuzzing scripts (run.sh, long.sh, seeds.sh): the sanitizer
# settings and each harness's libFuzzer options.  FUZZ_DIR is tests/fuzz.

# Every sanitizer report is fatal; ubsan.supp holds back known reports in
# code being changed elsewhere (see it).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1}
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$FUZZ_DIR/ubsan.supp

# fuzz_names: the harnesses, from tests/fuzz/fuzz_*.c.
fuzz_names() {
	for f in "$FUZZ_DIR"/fuzz_*.c; do
		f=${f##*/fuzz_}
		echo "${f%.c}"
	done
}

# fuzz_opts NAME: options for one harness: the largest input worth trying
# (a bit over the largest a parser accepts, or a real file's size for
# text), a per-input time limit, and the dictionary.
fuzz_opts() {
	case $1 in
	wire) max=70000 ;;		# XPU_WIRE_MAX_MSG is 65536
	record | replay) max=131072 ;;
	elf) max=65536 ;;
	*) max=8192 ;;	# lines are cut at 4096 bytes
	esac
	echo "-max_len=$max -timeout=10 -rss_limit_mb=2048 -dict=$FUZZ_DIR/dict/$1.dict"
}
