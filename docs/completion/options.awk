# SPDX-License-Identifier: GPL-2.0-only
# Reads `xputop --help` and prints one line per option for the completion:
#   SHORT|LONG[=ARG]      e.g. "-d|--delay=SECS", "|--export"
# (an optional argument, "--gpu-exact[=SECS]", gives "|--gpu-exact")
# --help prints each option as "  %-28s %s": the option and its argument in
# columns 3-30, a space, the help text.  A longer option column would make
# the argument ambiguous, so it stops the build instead.
/^Options:$/ { on = 1; next }
on && /^$/ { on = 0; exit }
on {
	if (substr($0, 1, 2) != "  " || (length($0) > 30 && substr($0, 31, 1) != " ")) {
		printf "options.awk: cannot read this --help line (option column wider than 28?): %s\n", $0 > "/dev/stderr"
		bad = 1
		exit 1
	}
	n = split(substr($0, 3, 28), w, " ")
	i = 1
	short = ""
	if (w[1] ~ /^-[^-],$/) {
		short = substr(w[1], 1, 2)
		i = 2
	}
	# An optional argument ("--gpu-exact[=SECS]") is only ever written
	# attached, so the completion treats the option as one without.
	if (w[i] ~ /^--[a-z0-9-]+\[=[A-Z]+\]$/ && n == i) {
		sub(/\[.*/, "", w[i])
		printf "%s|%s\n", short, w[i]
		count++
		next
	}
	if (w[i] !~ /^--[a-z0-9-]+$/ || n > i + 1) {
		printf "options.awk: not an option: %s\n", $0 > "/dev/stderr"
		bad = 1
		exit 1
	}
	printf "%s|%s%s\n", short, w[i], i < n ? "=" w[i + 1] : ""
	count++
}
END {
	if (!bad && !count) {
		print "options.awk: no options in the --help text" > "/dev/stderr"
		exit 1
	}
}
