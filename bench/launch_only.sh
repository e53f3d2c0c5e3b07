#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# What the launch-only path (CUDA processes without the injection library)
# costs the programs it watches, side by side in one run.
#
#   sudo bench/launch_only.sh [BUILD_DIR [OLD_BUILD_DIR]]   (ROUNDS=5 SECS=3)
#
# OLD_BUILD_DIR (optional; with OLD_REV=REV, that revision is built into a
# temporary directory) holds an older xputop to compare with, e.g. 3e0c13d,
# from before launches were counted in BPF: every launch took a 127-frame
# user stack into a ring record, turned into an event in user space.
#
# 1. Launches.  tests/progs/cuda_launch calls cudaLaunchKernel through the
#    real libcudart flat out for SECS seconds (no GPU: each call fails fast,
#    but the uprobe fires), in rotating order, ROUNDS times:
#      none      alone
#      bpftrace  an empty bpftrace program on cudaLaunchKernel: the uprobe's
#                trap with nothing done in it, the floor of any uprobe
#      exact     this xputop, --gpu-exact: the launch probes always on
#      sampled   this xputop as it runs by default: the probes on for 10 ms
#                of every 500 ms (uprobe_multi links attached and detached)
#      old       the old xputop (-b -d 1), when one is given
#    The cost is the launcher's CPU time per launch (the uprobe runs in it; a
#    CPU shared with others adds nothing to it), as the median over rounds
#    and the median of each round's ratio to none; also xputop's own CPU use
#    while the launcher runs, and (a separate pass with
#    kernel.bpf_stats_enabled) the BPF program's own run time per launch.
#    The old xputop finds libcudart only in processes its CPU sampling
#    caught: each setup first runs a busy launcher until xputop shows its
#    launches, so that both measure probed launches.  Each run loads a new
#    copy of libcudart (LD_LIBRARY_PATH); a run during which another process
#    (another xputop on a shared machine) held uprobes on that copy is run
#    again 10 s later, up to TRIES (5) times, and the number of such runs is
#    said.
# 2. The mapping hook (tp_btf/mmap_lock_acquire_returned), paid by every
#    program on the machine: bench/mmap_loop's CPU time per call, alone,
#    under the old xputop (no hook) and under this one, ROUNDS times:
#    mmap+munmap of a file with PROT_EXEC (the hook reads the file's name),
#    anonymous mmap+munmap (turned away without a file), and getppid (any
#    other syscall: the hook must not touch it, as a syscall tracepoint
#    would).
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
OUT=${1:-build}
X=$(realpath "$OUT/xputop")
CL=$(realpath "$OUT/tests/progs/cuda_launch")
LOOP=$(realpath "$OUT/bench/mmap_loop")
ROUNDS=${ROUNDS:-5}
SECS=${SECS:-3}
OLD_REV=${OLD_REV:-}
TMP=$(mktemp -d /tmp/xputop-bench.XXXXXX)
trap 'sysctl -qw kernel.bpf_stats_enabled=0; rm -rf "$TMP"' EXIT

[ "$(id -u)" -eq 0 ] || { echo "run as root" >&2; exit 1; }
CONFIGS="none bpftrace exact sampled"
command -v bpftrace > /dev/null || { echo "bench: no bpftrace: its setup is left out" >&2; CONFIGS="none exact sampled"; }
OLD=
if [ $# -ge 2 ]; then
	OLD=$(realpath "$2/xputop")
elif [ -n "$OLD_REV" ]; then
	echo "== building the old xputop ($OLD_REV)"
	mkdir "$TMP/old"
	git archive "$OLD_REV" | tar -x -C "$TMP/old"
	make -C "$TMP/old" -j"$(nproc)" build/xputop > "$TMP/old.log" 2>&1 || { tail "$TMP/old.log"; exit 1; }
	OLD=$TMP/old/build/xputop
fi
[ -z "$OLD" ] || CONFIGS="$CONFIGS old"
LIBC=$(ldd "$CL" | awk '/libc.so/ { print $3 }')
REAL_CUDART=$(ldd "$CL" | awk '/libcudart/ { print $3 }')
export LD_LIBRARY_PATH=$TMP/lib

# fresh_lib: a new copy of libcudart (a file no probe is on yet) for the
# launchers; sets $CUDART.
fresh_lib() {
	rm -rf "$TMP/lib"
	mkdir "$TMP/lib"
	cp "$REAL_CUDART" "$TMP/lib/"
	CUDART=$(echo "$TMP"/lib/libcudart.so*)
}

# foreign: uprobes on our copy of libcudart held by processes other than
# the tool under test.
foreign() {
	bpftool perf list 2> /dev/null | grep -F "$CUDART" | grep -vc "^pid ${tool:-0} " || true
}

# start SETUP: starts the tool of a setup and waits until it probes
# libcudart; sets $tool (empty for none).
start() {
	tool=
	case $1 in
	none) return ;;
	bpftrace)
		bpftrace -e "uprobe:$CUDART:cudaLaunchKernel { }" > "$TMP/tool.out" 2>&1 &
		tool=$!
		wait_for "$TMP/tool.out" "Attaching" ;;
	old|exact|sampled)
		set -- $1
		case $1 in old) bin=$OLD ;; exact) bin=$X; set -- "$1" --gpu-exact ;; *) bin=$X ;; esac
		"$bin" -b -j -d 1 ${2:-} > "$TMP/tool.out" 2> /dev/null &
		tool=$!
		wait_for "$TMP/tool.out" ""
		"$CL" -s 60 > /dev/null 2>&1 &
		warm=$!
		wait_for "$TMP/tool.out" "\"pid\":$warm,\"comm\":\"cuda_launch\",\"mode\":\"launches only\"" 60
		kill $warm
		wait $warm 2> /dev/null || true ;;
	esac
}

# measure SETUP: one launcher run under SETUP on a fresh copy of libcudart,
# again (up to TRIES times) while another process probed it; appends its
# CPU us per launch and the tool's % of a core, or counts it as left out.
measure() {
	for try in $(seq 1 "${TRIES:-5}"); do
		fresh_lib
		start $1
		c0=$([ -n "$tool" ] && cpu_ns $tool || echo 0)
		line=$("$CL" -s "$SECS" 2> /dev/null)
		c1=$([ -n "$tool" ] && cpu_ns $tool || echo 0)
		others=$(foreign)
		[ -n "$tool" ] && stop $tool
		if [ "$others" -eq 0 ]; then
			echo "$line" | sed -n 's/.*cpu_us_per_launch \([0-9.]*\).*/\1/p' >> "$TMP/launch.$1"
			awk -v a="$c0" -v b="$c1" -v s="$SECS" 'BEGIN { print (b - a) / s / 1e7 }' >> "$TMP/self.$1"
			return
		fi
		retried=$((retried + 1))
		sleep 10
	done
	echo - >> "$TMP/launch.$1"
	echo - >> "$TMP/self.$1"
	left_out=$((left_out + 1))
}

# Medians and per-round ratios over the runs that were measured ("-": given up).
num() { grep -v '^-$' "$1"; }
ratios() { paste "$1" "$2" | awk '$1 != "-" && $2 != "-" { print $2 / $1 }' | median; }

echo "== 1. cudaLaunchKernel flat out for $SECS s, CPU us per launch, $ROUNDS rounds"
for c in $CONFIGS; do : > "$TMP/launch.$c"; : > "$TMP/self.$c"; done
left_out=0
retried=0
for r in $(seq 1 "$ROUNDS"); do
	order=$(echo $CONFIGS | awk -v r="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $(1 + (i + r) % NF) }')
	for c in $order; do
		measure $c
	done
	printf 'round %d:' "$r"
	for c in $CONFIGS; do printf ' %s %s' $c "$(tail -1 "$TMP/launch.$c")"; done
	echo
done

echo "== BPF run time per launch and per run of the mapping hook (kernel.bpf_stats_enabled, a separate pass)"
sysctl -qw kernel.bpf_stats_enabled=1
for c in exact; do
	fresh_lib
	start $c
	b0=$(bpf_cost $tool kprobe)
	"$CL" -s "$SECS" > /dev/null 2>&1
	b1=$(bpf_cost $tool kprobe)
	echo "$b0 $b1" | awk -v c=$c '{ n = $4 - $2; printf "%s: %.0f ns per launch over %d launches\n", c, n ? ($3 - $1) / n : 0, n }'
	[ $c = exact ] || { stop $tool; continue; }
	for k in exec anon; do
		[ $k = exec ] && file=$LIBC || file=
		b0=$(bpf_cost $tool tracing)
		calls=$("$LOOP" $k $file 2 | sed -n 's/.*calls \([0-9]*\).*/\1/p')
		b1=$(bpf_cost $tool tracing)
		echo "$b0 $b1" | awk -v k=$k -v m="$calls" '{ n = $4 - $2; printf "mapping hook, %s: %.0f ns per run, %.1f runs per mmap+munmap\n", k, n ? ($3 - $1) / n : 0, n / m }'
	done
	stop $tool
done
sysctl -qw kernel.bpf_stats_enabled=0

echo
echo "== 2. the mapping hook: CPU ns per call, alone and under each xputop, $ROUNDS rounds"
HOOK="none sampled${OLD:+ old}"
for c in $HOOK; do for k in exec anon getppid; do : > "$TMP/$k.$c"; done; done
for r in $(seq 1 "$ROUNDS"); do
	order=$(echo $HOOK | awk -v r="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $(1 + (i + r) % NF) }')
	for c in $order; do
		tool=
		if [ $c != none ]; then
			[ $c = old ] && bin=$OLD || bin=$X	# the hook is the same in every mode
			"$bin" -b -j -d 1 > "$TMP/tool.out" 2> /dev/null &
			tool=$!
			wait_for "$TMP/tool.out" ""
		fi
		"$LOOP" exec "$LIBC" 2 | sed -n 's/.*cpu_ns_per_call \([0-9.]*\).*/\1/p' >> "$TMP/exec.$c"
		"$LOOP" anon 2 | sed -n 's/.*cpu_ns_per_call \([0-9.]*\).*/\1/p' >> "$TMP/anon.$c"
		"$LOOP" getppid 2 | sed -n 's/.*cpu_ns_per_call \([0-9.]*\).*/\1/p' >> "$TMP/getppid.$c"
		[ -n "$tool" ] && stop $tool
	done
	printf 'round %d:' "$r"
	for c in $HOOK; do printf ' %s %s/%s/%s' $c "$(tail -1 "$TMP/exec.$c")" "$(tail -1 "$TMP/anon.$c")" \
		"$(tail -1 "$TMP/getppid.$c")"; done
	echo
done

echo
echo "== summary: medians (spread), and the median of each round's ratio to none"
echo "(launch runs run again because another process probed the launcher: $retried; given up: $left_out)"
for c in $CONFIGS; do
	printf 'launch  %-8s %7.3f us (%s)  x%.2f  xputop/bpftrace itself %.1f%% of a core\n' $c \
		"$(num "$TMP/launch.$c" | median)" "$(num "$TMP/launch.$c" | spread %.3f)" \
		"$(ratios "$TMP/launch.none" "$TMP/launch.$c")" "$(num "$TMP/self.$c" | median)"
done
for k in exec anon getppid; do
	for c in $HOOK; do
		printf '%-7s %-8s %7.1f ns (%s)  x%.3f\n' $k $c "$(median < "$TMP/$k.$c")" \
			"$(spread %.0f < "$TMP/$k.$c")" "$(pair_ratios "$TMP/$k.none" "$TMP/$k.$c")"
	done
done
