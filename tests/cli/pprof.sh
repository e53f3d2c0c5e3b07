# SPDX-License-Identifier: GPL-2.0-only
# --pprof and --pprof-push: profiles that Debian's `go tool pprof` reads,
# compared with the folded exports of the same replay of
# tests/fixtures/fleet.xpr; a live profile's mappings with paths and
# build-ids; the push to an ingest endpoint the test runs (tests/pushd.py),
# which decodes what it gets.  Needs root (the live test) and golang-go.
. tests/lib.sh
need_root
REC=tests/fixtures/fleet.xpr
C="python3 tests/pprof_check.py"
# gotop PPROF-FILES...: `go tool pprof -top` with every node, names as written
gotop() { go tool pprof -top -symbolize=none -nodecount=100000 -nodefraction=0 -edgefraction=0 "$@" 2>&1; }
export GOCACHE="$T_TMP/gocache" HOME="$T_TMP"

t bad_pprof_options_are_refused_with_what_to_do
touch "$T_TMP/afile"
"$XPUTOP" -b -r "$REC" --pprof "$T_TMP/afile" > /dev/null 2> "$T_TMP/e1" && fail "a file taken for a directory"
expect_grep "pprof: $T_TMP/afile is not a directory" "$T_TMP/e1"
"$XPUTOP" -b -r "$REC" --pprof-push http://127.0.0.1:1 > /dev/null 2> "$T_TMP/e2" && fail "a push without --pprof accepted"
expect_grep "pprof-push and --pprof-interval go with --pprof DIR" "$T_TMP/e2"
mkdir -p "$T_TMP/p0"
"$XPUTOP" -b -r "$REC" --pprof "$T_TMP/p0" --pprof-push ftp://x > /dev/null 2> "$T_TMP/e3" && fail "ftp accepted"
expect_grep "expected an http:// or https:// URL" "$T_TMP/e3"

t go_tool_pprof_shows_the_cpu_folded_exports_totals_and_top_functions
mkdir -p "$T_TMP/cpu" "$T_TMP/cpu-fold"
"$XPUTOP" -b -r "$REC" --window 600 --view cpu --export -o "$T_TMP/cpu-fold" --pprof "$T_TMP/cpu" > /dev/null 2>&1 ||
	fail "xputop failed"
gotop -sample_index=samples "$T_TMP"/cpu/xputop-cpu-*.pb.gz > "$T_TMP/cpu.top"
$C "$T_TMP"/cpu-fold/xputop-cpu-*.folded "$T_TMP/cpu.top" > "$T_TMP/cpu.cmp" 2>&1 || fail "$(cat "$T_TMP/cpu.cmp")"
expect_grep "^Type: samples" "$T_TMP/cpu.top"

t every_string_of_a_profile_is_utf8_whatever_a_process_is_named
# Protobuf strings are UTF-8 (protobuf-go, behind Pyroscope and Parca,
# refuses others); the fleet recording's process name ends in a byte 0xff.
python3 - "$T_TMP"/cpu/xputop-cpu-*.pb.gz <<'EOF' || fail "a string of the profile is not UTF-8, or the name is missing"
import gzip, sys
buf = gzip.open(sys.argv[1]).read()
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, i
strings, i = [], 0
while i < len(buf):	# the Profile message's fields: string_table is field 6
    key, i = varint(buf, i)
    field, wire = key >> 3, key & 7
    if wire == 0:
        _, i = varint(buf, i)
    elif wire == 2:
        n, i = varint(buf, i)
        if field == 6:
            strings.append(buf[i:i + n])
        i += n
    elif wire in (1, 5):
        i += 8 if wire == 1 else 4
    else:
        sys.exit(f"wire type {wire}")
for s in strings:
    try:
        s.decode("utf-8")
    except UnicodeDecodeError:
        sys.exit(f"not UTF-8: {s!r}")
if not any(s.decode().endswith("x\u20ac\ufffd") for s in strings):
    sys.exit(f"no name ending in x, euro, U+FFFD among {len(strings)} strings")
EOF

t the_gpu_profile_holds_gpu_time_by_cpu_to_gpu_stack
mkdir -p "$T_TMP/gpu" "$T_TMP/gpu-fold"
"$XPUTOP" -b -r "$REC" --window 600 --view gpu --export -o "$T_TMP/gpu-fold" --pprof "$T_TMP/gpu" > /dev/null 2>&1 ||
	fail "xputop failed"
gotop -unit=us "$T_TMP"/gpu/xputop-gpu-*.pb.gz > "$T_TMP/gpu.top"
$C "$T_TMP"/gpu-fold/xputop-gpu-2*.folded "$T_TMP/gpu.top" > "$T_TMP/gpu.cmp" 2>&1 || fail "$(cat "$T_TMP/gpu.cmp")"
expect_grep "^Type: gpu_time" "$T_TMP/gpu.top"
# the kernel's trace, leaf first: kernel, launch API, the code that launched it, the process
go tool pprof -traces -symbolize=none "$T_TMP"/gpu/xputop-gpu-*.pb.gz 2> /dev/null |
	awk '/^-----/ { on = 0 } /matmul_kernel\(/ { on = 1 } on { print $NF }' | tr '\n' ' ' > "$T_TMP/gpu.trace"
grep -q "int)_\[g\] cudaLaunchKernel standin_matmul standin_forward standin_train_step main .* gpu_standin" \
	"$T_TMP/gpu.trace" || fail "the matmul kernel's stack: $(cat "$T_TMP/gpu.trace")"

t profiles_every_interval_hold_only_what_is_new_and_add_up
mkdir -p "$T_TMP/every"
"$XPUTOP" -b -r "$REC" -d 0.05 --pprof "$T_TMP/every" --pprof-interval 1 > /dev/null 2>&1 || fail "xputop failed"
N=$(ls "$T_TMP"/every/xputop-cpu-*.pb.gz | wc -l)
[ "$N" -ge 6 ] || fail "$N CPU profiles over 8 recorded seconds at 1 s"
gotop -sample_index=samples "$T_TMP"/every/xputop-cpu-*.pb.gz > "$T_TMP/every.top"
$C "$T_TMP"/cpu-fold/xputop-cpu-*.folded "$T_TMP/every.top" > "$T_TMP/every.cmp" 2>&1 ||
	fail "$N profiles together: $(cat "$T_TMP/every.cmp")"

t profiles_further_apart_than_the_window_add_up_too
# every entry is visited then, not only those with weight in the window
mkdir -p "$T_TMP/apart"
"$XPUTOP" -b -r "$REC" -d 0.05 --window 1 --pprof "$T_TMP/apart" --pprof-interval 2 > /dev/null 2>&1 || fail "xputop failed"
gotop -sample_index=samples "$T_TMP"/apart/xputop-cpu-*.pb.gz > "$T_TMP/apart.top"
$C "$T_TMP"/cpu-fold/xputop-cpu-*.folded "$T_TMP/apart.top" > "$T_TMP/apart.cmp" 2>&1 ||
	fail "$(ls "$T_TMP"/apart/xputop-cpu-*.pb.gz | wc -l) profiles together: $(cat "$T_TMP/apart.cmp")"

t a_live_profile_maps_each_module_to_its_file_and_build_id
# frames know their module by file name: a name of its own; and only this
# test's process is watched (-p), since other suites' busy programs running
# beside this one have the same build-id
BUSY=$T_TMP/busy-pprof-$$
cp "$OUT/tests/progs/busy" "$BUSY"
ID=$(readelf -n "$BUSY" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
mkdir -p "$T_TMP/live"
"$BUSY" 30 > /dev/null &
B=$!
"$XPUTOP" -b -n 6 -d 0.5 -F 199 -p $B --pprof "$T_TMP/live" > /dev/null 2> "$T_TMP/live.err" ||
	fail "xputop failed: $(cat "$T_TMP/live.err")"
kill $B; wait $B 2> /dev/null
go tool pprof -raw -symbolize=none "$T_TMP"/live/xputop-cpu-*.pb.gz > "$T_TMP/live.raw" 2>&1
grep -q "^[0-9]*: 0x0/0x0/0x0 $BUSY $ID " "$T_TMP/live.raw" ||
	fail "no mapping of $BUSY with build-id $ID: $(grep -A5 Mappings "$T_TMP/live.raw")"
gotop -sample_index=samples "$T_TMP"/live/xputop-cpu-*.pb.gz | grep -q "busy_leaf_spin" || fail "busy_leaf_spin is not in the profile"

t the_push_reaches_an_ingest_endpoint_that_decodes_it
mkdir -p "$T_TMP/push" "$T_TMP/pushed"
python3 tests/pushd.py "$T_TMP/pushed" "$T_TMP/push.port" &
R=$!
for _ in $(seq 50); do [ -s "$T_TMP/push.port" ] && break; sleep 0.1; done
PORT=$(cat "$T_TMP/push.port")
"$XPUTOP" -b -r "$REC" -d 0.05 --pprof "$T_TMP/push" --pprof-interval 4 --pprof-push "http://127.0.0.1:$PORT/" \
	> /dev/null 2> "$T_TMP/push.err" || fail "xputop failed: $(cat "$T_TMP/push.err")"
kill $R
wait $R 2> /dev/null
ls "$T_TMP"/pushed/*.pb.gz > /dev/null 2>&1 || fail "nothing was pushed: $(cat "$T_TMP/push.err")"
grep -q "^name=xputop.cpu{host=.*}&from=[0-9]*&until=[0-9]*&format=pprof&spyName=xputop&sampleRate=99$" \
	"$T_TMP"/pushed/*.query || fail "the query: $(cat "$T_TMP"/pushed/*.query)"
grep -q "^name=xputop.gpu{" "$T_TMP"/pushed/*.query || fail "no GPU profile pushed"
CPUS=$(grep -l "^name=xputop.cpu" "$T_TMP"/pushed/*.query | sed 's/\.query$/.pb.gz/')
# shellcheck disable=SC2086
gotop -sample_index=samples $CPUS > "$T_TMP/pushed.top"
$C "$T_TMP"/cpu-fold/xputop-cpu-*.folded "$T_TMP/pushed.top" > "$T_TMP/pushed.cmp" 2>&1 ||
	fail "what was pushed: $(cat "$T_TMP/pushed.cmp")"

t the_push_sends_the_headers_file_and_a_user_agent_and_never_prints_a_value
rm -f "$T_TMP"/pushed/* "$T_TMP/push.port"
python3 tests/pushd.py "$T_TMP/pushed" "$T_TMP/push.port" &
R=$!
for _ in $(seq 50); do [ -s "$T_TMP/push.port" ] && break; sleep 0.1; done
PORT=$(cat "$T_TMP/push.port")
printf '# credentials for the ingest\nAuthorization: Bearer s3cret-token\n\nX-Scope-OrgID: tenant-42\n' > "$T_TMP/headers"
chmod 600 "$T_TMP/headers"
"$XPUTOP" -b -r "$REC" -d 0.05 --pprof "$T_TMP/push" --pprof-interval 4 --pprof-push "http://127.0.0.1:$PORT/" \
	--pprof-headers "$T_TMP/headers" > /dev/null 2> "$T_TMP/hdr.err" || fail "xputop failed: $(cat "$T_TMP/hdr.err")"
ls "$T_TMP"/pushed/*.headers > /dev/null 2>&1 || fail "nothing was pushed: $(cat "$T_TMP/hdr.err")"
VERSION=$("$XPUTOP" --version | cut -d' ' -f2)
for f in "$T_TMP"/pushed/*.headers; do
	for h in "Authorization: Bearer s3cret-token" "X-Scope-OrgID: tenant-42" "User-Agent: xputop/$VERSION"; do
		grep -qx "$h" "$f" || fail "$h did not arrive: $(cat "$f")"
	done
done
grep -q "s3cret" "$T_TMP/hdr.err" && fail "xputop printed the token: $(cat "$T_TMP/hdr.err")"
kill $R
wait $R 2> /dev/null

t a_headers_file_others_can_read_or_a_bad_line_is_refused_without_its_value
chmod 644 "$T_TMP/headers"
"$XPUTOP" -b -n 1 -r "$REC" --pprof "$T_TMP/push" --pprof-push "http://127.0.0.1:$PORT/" \
	--pprof-headers "$T_TMP/headers" > /dev/null 2> "$T_TMP/hdr644.err" && fail "a world-readable headers file accepted"
expect_grep "headers: $T_TMP/headers holds credentials, yet other users can read or change it (mode 0644" "$T_TMP/hdr644.err"
printf 'Authorization Bearer s3cret-token\n' > "$T_TMP/badheaders"
chmod 600 "$T_TMP/badheaders"
"$XPUTOP" -b -n 1 -r "$REC" --pprof "$T_TMP/push" --pprof-push "http://127.0.0.1:$PORT/" \
	--pprof-headers "$T_TMP/badheaders" > /dev/null 2> "$T_TMP/hdrbad.err" && fail "a bad line accepted"
expect_grep "badheaders: line 1: expected 'Name: value'" "$T_TMP/hdrbad.err"
grep -q "s3cret" "$T_TMP/hdr644.err" "$T_TMP/hdrbad.err" && fail "a refusal quoted the value"

t a_missing_pprof_directory_is_created_0750_and_a_missing_parent_is_said
rm -rf "$T_TMP/made"
( umask 077 && "$XPUTOP" -b -n 2 -d 0.1 -r "$REC" --pprof "$T_TMP/made" > /dev/null 2> "$T_TMP/made.err" ) ||
	fail "xputop failed: $(cat "$T_TMP/made.err")"
[ "$(stat -c %a "$T_TMP/made")" = 750 ] || fail "the directory's mode is $(stat -c %a "$T_TMP/made"), not 750"
ls "$T_TMP"/made/xputop-cpu-*.pb.gz > /dev/null 2>&1 || fail "no profile in the directory made"
"$XPUTOP" -b -n 1 -r "$REC" --pprof "$T_TMP/nothere/made" > /dev/null 2> "$T_TMP/noparent.err" && fail "a missing parent accepted"
expect_grep "^xputop: --pprof: cannot create $T_TMP/nothere/made: No such file or directory (its parent directory is missing)" "$T_TMP/noparent.err"

t a_push_server_that_is_down_is_reported_and_never_holds_xputop_up
mkdir -p "$T_TMP/down"
S=$(date +%s)
"$XPUTOP" -b -r "$REC" -d 0.05 --pprof "$T_TMP/down" --pprof-interval 2 --pprof-push "http://127.0.0.1:1" \
	> /dev/null 2> "$T_TMP/down.err" || fail "xputop failed"
[ $(($(date +%s) - S)) -lt 30 ] || fail "xputop took $(($(date +%s) - S)) s"
expect_grep "pprof-push: [0-9]* profiles not sent; the last: http://127.0.0.1:1/ingest: .*Connection refused\|Couldn't connect" "$T_TMP/down.err"
ls "$T_TMP"/down/xputop-cpu-*.pb.gz > /dev/null 2>&1 || fail "the files were not written"

finish
