# SPDX-License-Identifier: GPL-2.0-only
# The layering of the folders (docs/architecture.md), kept by tests/layers.py:
# the tree as it is passes, and each kind of break, made in a copy, is named.
# test-san: skip
. tests/lib.sh
LAYERS="python3 tests/layers.py"

t the_tree_keeps_its_layers
$LAYERS --build "$OUT" > "$T_TMP/out" 2>&1 || fail "$(cat "$T_TMP/out")"

# broken FILE LINE: a copy of the tree whose FILE has LINE added, in
# $T_TMP/tree; its check's output goes to $T_TMP/broken.
broken() {
	rm -rf "$T_TMP/tree"
	mkdir -p "$T_TMP/tree"
	cp -r bpf core inject tui "$T_TMP/tree/"
	printf '%s\n' "$2" >> "$T_TMP/tree/$1"
	if $LAYERS --root "$T_TMP/tree" > "$T_TMP/broken" 2>&1; then
		fail "adding '$2' to $1 passed the check"
	fi
}
# names WORD...: the broken tree's check names each WORD.
names() {
	for w in "$@"; do
		grep -qF -- "$w" "$T_TMP/broken" || fail "the check does not name '$w': $(cat "$T_TMP/broken")"
	done
}

t a_lower_layer_including_a_higher_one_is_named
broken core/models/model_cpu.c '#include "batch.h"'
names 'core/models/model_cpu.c' '#include "batch.h"' 'core/models/ may not include core/outputs/'

t a_circle_between_folders_is_named
broken core/stream/record.c '#include "session.h"'
names 'circle between folders' 'core/stream/record.c' '#include "session.h"'

t a_circle_between_files_of_a_folder_is_named
broken core/outputs/batch_fmt.c '#include "batch.h"'
names 'circle between files' 'core/outputs/batch_fmt.c' '#include "batch.h"'

t a_file_outside_the_layers_is_named
broken core/stray.c '#include "dict.h"'
names 'core/stray.c: core/ holds only folders'

t bpf_includes_nothing_from_core_or_tui
broken bpf/cpu.h '#include "dict.h"'
names 'bpf/cpu.h' '#include "dict.h"' 'bpf/ may not include core/util/'
broken bpf/npu.bpf.c '#include "tui.h"'
names 'bpf/npu.bpf.c' '#include "tui.h"'

t the_tui_includes_only_the_snapshot_of_the_models
broken tui/bars.c '#include "model_npu.h"'
names 'tui/bars.c' '#include "model_npu.h"' 'tui/ may not include core/models/'
broken tui/bars.c '#include "session.h"'
names 'tui/bars.c' 'tui/ may include only flame.h, snapshot.h'

t the_injection_library_includes_neither_libbpf_nor_curses_nor_core
broken inject/channel.c '#include <bpf/libbpf.h>'
names 'inject/channel.c' 'bpf/libbpf.h is only for'
broken inject/channel.c '#include <curses.h>'
names 'inject/channel.c' 'curses.h is only for tui'
broken inject/channel.c '#include "err.h"'
names 'inject/channel.c' 'inject/ may not include core/util/'

t the_tui_calls_no_model_function
# A TUI object that calls into the NPU model, beside the real core objects.
mkdir -p "$T_TMP/b/tui"
ln -s "$(pwd)/$OUT/core" "$T_TMP/b/core"
printf 'void xpu_npu_model_tick(void);\nvoid bad(void) { xpu_npu_model_tick(); }\n' > "$T_TMP/bad.c"
cc -c "$T_TMP/bad.c" -o "$T_TMP/b/tui/bad.o" || fail "cannot compile the stand-in"
if $LAYERS --build "$T_TMP/b" > "$T_TMP/broken" 2>&1; then
	fail "a TUI object calling xpu_npu_model_tick passed the check"
fi
names 'tui/bad.c calls xpu_npu_model_tick (core/models/model_npu.c)'

t the_injection_library_links_no_libbpf
printf 'int ring_buffer__poll(void *rb, int ms);\nint f(void) { return ring_buffer__poll(0, 0); }\n' > "$T_TMP/inj.c"
cc -shared -fPIC "$T_TMP/inj.c" -o "$T_TMP/b/libxputop_inject.so" || fail "cannot link the stand-in"
if $LAYERS --build "$T_TMP/b" > "$T_TMP/broken" 2>&1; then
	fail "an injection library calling ring_buffer__poll passed the check"
fi
names 'libxputop_inject.so holds ring_buffer__poll'

t every_source_file_names_its_licence
# GPL-2.0-only (LICENSE), which the BPF programs need: an SPDX line in the
# first two lines (after a #! line) of every C, shell, Python, CUDA, awk and
# JavaScript file, the Makefile and the CI scripts.
grep -q "Version 2, June 1991" LICENSE 2> /dev/null || fail "LICENSE is not the GPL version 2"
if git -c safe.directory="$PWD" rev-parse --git-dir > /dev/null 2>&1; then
	git -c safe.directory="$PWD" ls-files
else
	find . -path ./build\* -prune -o -type f -print | sed 's|^\./||'
fi | grep -vE '^tests/fuzz/corpus/' | grep -E '\.(c|h|sh|py|cu|mjs|awk)$|^Makefile$|^tests/run$|^\.ci/(run|setup)$' |
	while read -r f; do
		head -n 2 "$f" | grep -q 'SPDX-License-Identifier: GPL-2.0-only' || echo "$f"
	done > "$T_TMP/unlicensed"
[ -s "$T_TMP/unlicensed" ] && fail "no SPDX line: $(head -5 "$T_TMP/unlicensed" | tr '\n' ' ')($(wc -l < "$T_TMP/unlicensed") files)"

t a_tui_function_named_like_a_core_object_is_named
broken tui/pane.h 'void xpu_table_frob(void);'
names 'tui/pane.h' 'core/util/table.h' 'xpu_table_*'

t a_function_defined_in_two_layers_is_named
broken tui/pane.c 'void xpu_json_init(void) { }'
names 'xpu_json_init is defined in' 'core/util/json.c' 'tui/pane.c'

t a_view_named_outside_its_files_and_the_view_tables_is_named
# Adding a view touches its own files and the tables that list the views.
broken core/outputs/metrics.c 'static const int shown = XPU_VIEW_NPU;'
names 'core/outputs/metrics.c' 'names XPU_VIEW_NPU'
broken tui/bars.c 'static const void *v = &xpu_view_cpu;'
names 'tui/bars.c' 'names xpu_view_cpu'

t every_path_a_comment_or_document_names_exists
python3 tests/paths.py > "$T_TMP/paths" 2>&1 || fail "$(cat "$T_TMP/paths")"
# and a stale one is named, with where
rm -rf "$T_TMP/ptree" && mkdir -p "$T_TMP/ptree/core/util"
printf '/* as core/share.h says (docs/architecture.md) */\n' > "$T_TMP/ptree/core/util/a.c"
mkdir -p "$T_TMP/ptree/docs" && : > "$T_TMP/ptree/docs/architecture.md"
python3 tests/paths.py "$T_TMP/ptree" > "$T_TMP/paths" 2>&1 && fail "a stale path passed"
grep -qx 'core/share.h: named in core/util/a.c:1' "$T_TMP/paths" || fail "not named: $(cat "$T_TMP/paths")"

finish
