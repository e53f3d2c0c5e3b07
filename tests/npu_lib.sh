# SPDX-License-Identifier: GPL-2.0-only
# Sourced by the NPU suites (tests/bpf/npu.sh, npu_probes.sh) after
# tests/lib.sh: the stand-in programs, the refresh and TDR the checks assume,
# and scenario().
Q="python3 tests/jsonq.py"
# The suite's own copy of the stand-in: uprobes belong to a file, so another
# suite's stand-in processes (a stall, a recovery) never reach this one's
# xputops, nor this one's theirs.
cp "$OUT/tests/progs/npu_driver" "$T_TMP/npu_driver"
DRV=$T_TMP/npu_driver
IOC=$OUT/tests/progs/npu_ioctl
L0=$OUT/tests/progs/npu_l0
REFRESH_MS=500
TDR_MS=2000

# scenario NAME SECONDS REFRESHES: plays a stand-in scenario under xputop;
# leaves the snapshots in $T_TMP/NAME.json, the fault's onset in $ONSET and
# the jobs the stand-in completed in $DONE.
scenario() {
	"$XPUTOP" -b -j -d 0.5 -n "$3" ${SCEN_ARGS:-} --npu-probe-binary "$DRV" > "$T_TMP/$1.json" 2> "$T_TMP/$1.json.err" &
	xp=$!
	wait_json "$T_TMP/$1.json"
	"$DRV" "$1" "$2" > "$T_TMP/$1.onset" || fail "npu_driver $1 failed"
	wait $xp || fail "xputop exited with $?: $(cat "$T_TMP/$1.json.err")"
	ONSET=$(awk '/^onset/ { print $2 }' "$T_TMP/$1.onset")
	DONE=$(awk '/^done/ { print $2 }' "$T_TMP/$1.onset")
}

# The alerts below are due at the TDR: raised by the first refresh after it
# (within TDR_MS + REFRESH_MS when refreshes come on time).
