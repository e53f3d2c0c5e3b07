# SPDX-License-Identifier: GPL-2.0-only
# The GPU device panel (NVML) through a real terminal (tmux), fed by the
# stand-in libnvidia-ml (tests/fake/fake_nvml.c): what a person reads at a
# glance, N/A for what the driver does not give, how the panel gives up
# detail on a short terminal, NVML's failure, a replay.  Needs root.
. tests/lib.sh
need_root
. tests/tmux.sh

FAKE=$(realpath "$OUT/tests/libfake_nvml.so")
export FAKE_NVML="$T_TMP/scenario"
GIB=1073741824

# start COLS ROWS [ARGS]: xputop on the stand-in in the GPU view.
start() {
	new_terminal "$1" "$2" "env LANG=C.UTF-8 FAKE_NVML=$FAKE_NVML XPUTOP_NVML=$FAKE $XPUTOP -d 0.3 --view gpu $3; sleep 600"
}

sleep 600 > /dev/null 2>&1 &
HOST=$!
# devices [N]: N devices (3 by default), each with two processes.
devices() {
	: > "$FAKE_NVML"
	for i in $(seq 0 $((${1:-3} - 1))); do
		cat >> "$FAKE_NVML" <<-EOF
		device
		name NVIDIA H100 80GB HBM3
		util 45 12
		memory $((80 * GIB)) $((12 * GIB))
		power 312000
		limit 700000
		temp 63
		clocks 1980 2619
		pcie 1000 2000
		nvlink 18 1000000 2000000
		proc compute $HOST $((3 * GIB))
		procutil $HOST 37 21 0 0
		proc compute 4194000 $GIB
		EOF
	done
	printf 'device\nname NVIDIA A10\n' >> "$FAKE_NVML"
}

t each_device_reads_at_a_glance_with_its_processes
devices 1
start 160 40
wait_for "GPU0  NVIDIA H100 80GB HBM3"
wait_for "NVLink x18 rx 9"
for s in "devices active  NVML, driver" "GPU\\[" "45%\\]" "MEM\\[" "12.0/80.0 GiB\\]" "temp 63°C" \
	"power 312 / 700 W" "clocks SM 1980 mem 2619 MHz" "mem busy 12%" "PCIe rx 1000 KiB/s tx 1.95 MiB/s"; do
	expect_grep "$s" "$T_TMP/screen" "the GPU0 lines"
done
expect_grep "pid $HOST .* sleep  *root  *compute  *3.00 GiB  SM  37%  mem  21%" "$T_TMP/screen" "the process line"
expect_grep "pid 4194000 .* ?  *-  *compute  *1.00 GiB  SM N/A  mem N/A" "$T_TMP/screen" "a process gone from /proc"

t fields_the_driver_does_not_give_say_na
expect_grep "GPU1  NVIDIA A10 .*GPU\[ *N/A\]  MEM\[ *N/A\]" "$T_TMP/screen" "GPU1's gauges"
expect_grep "temp N/A  power N/A / N/A  clocks SM N/A mem N/A  mem busy N/A  PCIe rx N/A tx N/A$" "$T_TMP/screen" "GPU1's second line"

t devices_alone_make_a_gpu_view_not_a_message_box
grep -q "GPU source:" "$T_TMP/screen" && fail "the message box is shown"
expect_grep "no kernels yet" "$T_TMP/screen" "the kernels table"

t a_short_terminal_drops_process_lines_before_device_lines
devices 3
start 120 24
wait_for "GPU3  NVIDIA A10"
expect_grep "temp 63°C" "$T_TMP/screen" "the second lines"
grep -q "pid $HOST" "$T_TMP/screen" && fail "process lines on a short terminal"
start 120 60
wait_for "pid $HOST"

t a_failing_driver_is_shown_with_its_reason
echo "init 9" > "$FAKE_NVML"
start 120 30
wait_for "devices failed  "
expect_grep "nvmlInit failed: Driver Not Loaded" "$T_TMP/screen" "the reason"

t a_replay_shows_the_recorded_devices
# The earlier tests' xputops go first: one still running would be the
# collector the recording xputop attaches to, with its own NVML scenario.
tm_end "$SOCK"
sleep 0.5
devices 1
XPUTOP_NVML=$FAKE "$XPUTOP" -b -n 4 -d 0.4 -w "$T_TMP/dev.xpr" > /dev/null 2>&1 || fail "cannot record"
new_terminal 160 40 "env LANG=C.UTF-8 $XPUTOP -r $T_TMP/dev.xpr --view gpu; sleep 600"
wait_for "GPU0  NVIDIA H100 80GB HBM3"
expect_grep "devices active  replaying" "$T_TMP/screen" "the state line"
expect_grep "pid $HOST .* sleep" "$T_TMP/screen" "the process line"

kill $HOST
tm_end "$SOCK"
finish
