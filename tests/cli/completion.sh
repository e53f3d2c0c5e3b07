# SPDX-License-Identifier: GPL-2.0-only
# Bash completion ($OUT/xputop.bash, built from docs/completion/xputop.bash.in
# and --help): sourced in bash and asked as bash asks it, with COMP_WORDS and
# COMP_CWORD.
# test-san: skip
. tests/lib.sh
COMP=$OUT/xputop.bash
command -v bash > /dev/null || { echo "FAIL $(basename "$0"): bash is not installed" >&2; exit 1; }
[ -r "$COMP" ] || { echo "FAIL $(basename "$0"): $COMP is missing: run make" >&2; exit 1; }

# comp [CMD] -- WORD...: what the completion offers for the last WORD, one
# per line, sorted (CMD: the command as typed, default xputop).
comp() {
	cmd=xputop
	[ "$1" != "--" ] && { cmd=$1; shift; }
	shift
	# shellcheck disable=SC2016
	bash --norc --noprofile -c '
		. "$1" || exit 1
		cmd=$2
		shift 2
		COMP_WORDS=("$cmd" "$@")
		COMP_CWORD=$#
		COMP_LINE="${COMP_WORDS[*]}"
		COMP_POINT=${#COMP_LINE}
		_xputop "$cmd" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		[ ${#COMPREPLY[@]} -gt 0 ] && printf "%s\n" "${COMPREPLY[@]}" | sort
		exit 0' sh "$COMP" "$cmd" "$@"
}

# offers "WANT..." WORD...: the completion of WORD... is exactly WANT...
offers() {
	# shellcheck disable=SC2086
	want=$(printf '%s\n' $1 | sed '/^$/d' | sort)
	shift
	got=$(comp -- "$@")
	[ "$got" = "$want" ] || fail "completing '$*': got [$(echo $got)], want [$(echo $want)]"
}

# includes "WANT..." WORD...: the completion of WORD... has each WANT.
includes() {
	want=$1
	shift
	got=$(comp -- "$@")
	for w in $want; do
		printf '%s\n' "$got" | grep -qxF -- "$w" || fail "completing '$*': no '$w' in [$(echo $got)]"
	done
}

"$XPUTOP" --help > "$T_TMP/help" || fail "--help failed"

t every_option_in_help_is_offered_and_nothing_else
sed -n '/^Options:$/,/^$/p' "$T_TMP/help" | grep -o -- '--[a-z][a-z0-9-]*\|^  -[A-Za-z],' | tr -d ', ' | sort > "$T_TMP/help.opts"
[ -s "$T_TMP/help.opts" ] || fail "no options in --help"
comp -- - > "$T_TMP/comp.opts"
if ! cmp -s "$T_TMP/help.opts" "$T_TMP/comp.opts"; then
	fail "--help and the completion disagree: $(diff "$T_TMP/help.opts" "$T_TMP/comp.opts" | grep '^[<>]' | tr '\n' ' ')"
fi
offers "--verbose --version" --ver
offers "--theme --threads" --th

t the_word_after_an_option_with_an_argument_is_its_value
# Each option that --help shows with an argument: the next word is its
# value, never an option name; after the others, options go on.
for o in $(sed -n 's/^ *\(-., \)\{0,1\}\(--[a-z0-9-]*\) [A-Z].*/\2/p' "$T_TMP/help") \
	$(sed -n 's/^ *\(-.\), --[a-z0-9-]* [A-Z].*/\1/p' "$T_TMP/help"); do
	[ -n "$(comp -- "$o" --ver)" ] && fail "after $o, '--ver' was completed as an option"
done
for o in --batch -b --export --gpu-no-stacks; do
	offers "--verbose --version" "$o" --ver
done

t theme_names_come_from_the_shipped_and_the_users_themes
shipped=$(for f in themes/*.theme; do basename "$f" .theme; done)
mkdir -p "$T_TMP/config/xputop/themes" "$T_TMP/.config/xputop/themes"
cp themes/mono.theme "$T_TMP/config/xputop/themes/my-own.theme"
cp themes/mono.theme "$T_TMP/.config/xputop/themes/in-home.theme"
export XDG_CONFIG_HOME="$T_TMP/config"
offers "$shipped my-own" -t ""
offers "my-own" --theme my
offers "my-own" --theme = my
offers "$shipped my-own" --theme =
XDG_CONFIG_HOME=
HOME=$T_TMP
offers "$shipped in-home" -t ""
unset XDG_CONFIG_HOME

t a_theme_given_as_a_path_completes_file_names
offers "themes/light.theme" -t themes/li

t view_names_are_the_views_the_parser_accepts
offers "gpu npu cpu" --view ""
for v in $(comp -- --view ""); do
	"$XPUTOP" --view "$v" --help > /dev/null 2>&1 || fail "--view $v is offered but refused"
done
"$XPUTOP" --view tpu -b > /dev/null 2> "$T_TMP/err" && fail "--view tpu accepted"
parser=$(sed -n 's/.*expected \(.*\)/\1/p' "$T_TMP/err" | sed 's/,//g; s/ or / /' | tr ' ' '\n' | sort | tr '\n' ' ')
offered=$(comp -- --view "" | tr '\n' ' ')
[ "$parser" = "$offered" ] || fail "the parser wants [$parser], the completion offers [$offered]"

t the_names_an_option_takes_are_offered_as_the_parser_has_them
offers "pid comm cgroup container" --prometheus-label ""
offers "cgroup comm container" --prometheus-label c
offers "comm container" --prometheus-label co
for v in $(comp -- --prometheus-label ""); do
	"$XPUTOP" --prometheus-label "$v" --help > /dev/null 2>&1 || fail "--prometheus-label $v is offered but refused"
done

t file_arguments_complete_paths_and_directories_only_directories
mkdir -p "$T_TMP/dir.d"
: > "$T_TMP/rec.xpr"
offers "$T_TMP/rec.xpr" -w "$T_TMP/re"
offers "$T_TMP/rec.xpr" --read "$T_TMP/re"
offers "$T_TMP/rec.xpr" --npu-probe-binary "$T_TMP/re"
offers "$T_TMP/dir.d" -o "$T_TMP/d"
offers "$T_TMP/dir.d" --output-dir = "$T_TMP/d"
[ -n "$(comp -- -o "$T_TMP/re")" ] && fail "-o offered a file"

t process_ids_complete_after_the_last_comma
sleep 30 &
S=$!
includes "$S" -p ""
includes "1,$S" -p "1,$S"
offers "" -p "1,${S}9999999"
kill "$S" 2> /dev/null
wait "$S" 2> /dev/null

t process_names_complete_too
cp "$(command -v sleep)" "$T_TMP/xpt-sleeper"
"$T_TMP/xpt-sleeper" 30 &
S=$!
includes "xpt-sleeper" -p "xpt-sl"
includes "1,xpt-sleeper" -p "1,xpt-sl"
kill "$S" 2> /dev/null
wait "$S" 2> /dev/null

t numbers_get_no_suggestions
offers "" -d ""
offers "" --npu-tdr 1

t sort_columns_are_those_the_parser_takes_in_the_view_given
# What --sort refuses lists what it takes: "(default, pid, ...)"; the
# completion offers the same, in the --view given (issue 28).
for v in gpu npu cpu; do
	"$XPUTOP" --no-config --view $v --sort no-such-column -b -n 1 > /dev/null 2> "$T_TMP/err"
	want=$(sed -n 's/.*not a column of this view (\(.*\)).*/\1/p' "$T_TMP/err" | tr -d ',')
	[ -n "$want" ] || fail "--sort no-such-column: $(cat "$T_TMP/err")"
	offers "$want" --view $v --sort ""
	offers "$want" --view=$v -s ""
done
includes "cpu_pct mem_pct nice" --view cpu --sort ""
includes "cpu_pct total" -s ""
offers "mem_pct" --view cpu --sort me

t after_a_double_dash_come_a_command_and_its_arguments
: > "$T_TMP/file-one"
includes "python3" -- pyth
includes "sleep" -b -n 3 -- slee
offers "$T_TMP/file-one" -- cat "$T_TMP/file-o"

t the_first_word_that_is_not_an_option_starts_the_command
includes "sleep" -b slee
offers "--theme --threads" -o "$T_TMP" --th
offers "" sleep --th

t the_built_completion_is_filled_in_and_valid_bash
grep -q "^_xputop_bindir='/" "$COMP" || fail "no installation directory in $COMP"
grep -q '@[A-Z]*@' "$COMP" && fail "unfilled placeholders in $COMP: $(grep -o '@[A-Z]*@' "$COMP" | tr '\n' ' ')"
bash -n "$COMP" || fail "$COMP is not valid bash"

finish
