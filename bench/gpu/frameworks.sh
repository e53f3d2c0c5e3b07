#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The GPU view on real framework code (issue 12), on a machine with an NVIDIA
# GPU and PyTorch (+ transformers), as root; not part of CI:
#
#   sudo bench/gpu/frameworks.sh BUILD_DIR OUT_DIR [WORKLOAD...]
#
# Each workload runs twice: under PyTorch's own profiler (torch.profiler, the
# reference count of kernels: CUPTI takes one subscriber, hence two runs),
# then under `xputop -b -j -d 1 --gpu-exact --export` with `python3 -X perf`.
# frameworks_check.py compares them: kernels counted + dropped = launched,
# GPU time joined to complete stacks that reach the workload's own Python
# function and a launch API, graph kernels joined to their graph launch,
# snapshots on time, xputop's own CPU.  Workloads: hf (HF transformers
# batch-1 greedy decoding), compiled (torch.compile reduce-overhead, CUDA
# graphs), multiproc (two torch.multiprocessing workers), loop128, loop512,
# loop1024 (matmul + relu + sum).  Default: all of these.  Also, named:
# train, train_compiled, train_ddp, train_fsdp (bench/gpu/train_gpt2.py:
# GPT-2-style training eager, torch.compile'd, and with DDP or FSDP on two
# GPUs: issue 26, the backward's kernels under train_step).  XPUTOP_ARGS: more xputop options
# (e.g. --gpu-nodes).
set -u
BUILD=$(realpath "${1:-build}")
OUTD=$(realpath "${2:-/tmp/xputop-frameworks}")
shift 2 2> /dev/null
WORK=${*:-hf compiled multiproc loop128 loop512 loop1024}
HERE=$(dirname "$(realpath "$0")")
X=$BUILD/xputop
export PYTHONUNBUFFERED=1
mkdir -p "$OUTD"
status=0

# args of each workload: script, its function, its options, "graphs" or ""
spec() {
	case $1 in
	hf) echo "hf_decode.py decode_tokens --steps 6 --tokens 64 --warmup 1" ;;
	compiled) echo "compiled.py forward_step --steps 3000 --warmup 5" ;;
	multiproc) echo "multiproc.py worker_step --steps 3000 --warmup 20 --size 256" ;;
	loop128) echo "torch_loop.py train_step --steps 5000 --warmup 20 --size 128" ;;
	train) echo "train_gpt2.py train_step --steps 20 --warmup 3" ;;
	train_compiled) echo "train_gpt2.py train_step --steps 20 --warmup 3 --compile" ;;
	train_ddp) echo "train_gpt2.py train_step --steps 20 --warmup 3 --ddp 2" ;;
	train_fsdp) echo "train_gpt2.py train_step --steps 20 --warmup 3 --ddp 2 --fsdp" ;;
	loop512) echo "torch_loop.py train_step --steps 3000 --warmup 20 --size 512" ;;
	loop1024) echo "torch_loop.py train_step --steps 2000 --warmup 20 --size 1024" ;;
	esac
}

echo "== machine"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
for w in $WORK; do
	set -- $(spec "$w")
	script=$1 func=$2
	shift 2
	D=$OUTD/$w
	rm -rf "$D"
	mkdir -p "$D"
	echo "== $w: $script $*"
	(cd "$HERE" && python3 "$script" "$@" --profile --out "$D/ref.jsonl") > "$D/ref.log" 2>&1 ||
		{ echo "$w: the profiled run failed"; tail -5 "$D/ref.log"; status=1; continue; }
	# PYTHONPERFSUPPORT as well as -X perf: spawned workers inherit it.
	# --gpu-exact: the checks count every kernel (sampled figures are
	# estimates: bench/gpu/modes.sh measures those).
	(cd "$HERE" && PYTHONPERFSUPPORT=1 "$X" -b -j -d 1 --window 600 --view gpu --gpu-exact ${XPUTOP_ARGS:-} --export -o "$D" -- \
		python3 -X perf "$script" "$@" --out "$D/run.jsonl") > "$D/xputop.json" 2> "$D/xputop.err" ||
		{ echo "$w: the run under xputop failed"; tail -5 "$D/xputop.err"; status=1; continue; }
	graphs=""
	[ "$w" = compiled ] && graphs=graphs
	python3 "$HERE/frameworks_check.py" "$w" "$D/ref.jsonl" "$D/run.jsonl" "$D/xputop.json" "$D" "$func" $graphs ||
		status=1
done
exit $status
