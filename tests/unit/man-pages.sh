#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The manual pages render cleanly, and every public class of libndk has
# one:
#   man-pages.sh [SRC]          SRC: the source tree (default: this one)
#
# (a) Every Documentation/man/*.[1-8] renders with
#     `groff -man -Tutf8 -ww -z` (all warnings on) without a single line of
#     output, is plain ASCII (groff reads Latin-1: write \(-> and friends),
#     and its .TH names the file: ndk_QueuePair.3 has
#     `.TH NDK_QUEUEPAIR 3`.
# (b) Every class or struct that lib/include/ndk/*.hpp defines at
#     namespace scope is documented.  Counted: `class X`, `struct X`,
#     `class [[nodiscard]] X`, and `template <...>` classes (a
#     specialisation such as Result<void> counts as its template);
#     not counted: anything inside namespace detail or testing (or a class
#     or function), forward declarations (`class X;`), enum classes.
#     Such a class X is documented when either
#       - Documentation/man/ndk_X.3 exists (its own page), or
#       - X is a plain record (a parameter or result struct such as
#         QueuePairParams, CompletionResult, Sge, AdapterInfo) described
#         on the page of the class that uses it: its name appears, as a
#         word, in a `.SS` heading or in the tag line after a `.TP` of some
#         .3 page (e.g. `.SS "struct ndk::Sge"` in ndk_QueuePair.3).
#     A public class with neither fails the test, which names it.
# (c) libndk.3, the overview, lists every other .3 page in SEE ALSO.
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
man=$src/Documentation/man
fail=0
err() {
	echo "man-pages: $*"
	fail=1
}

command -v groff > /dev/null ||
	{ echo "man-pages: groff not found (scripts/deps.sh installs groff-base)"; exit 1; }

# --- (a) every page renders without a warning --------------------------
pages=0
for f in "$man"/*.[1-8]; do
	[[ -e $f ]] || continue
	pages=$((pages + 1))
	base=${f##*/}
	out=$(groff -man -Tutf8 -ww -z "$f" 2>&1) || err "$base: groff failed"
	[[ -z $out ]] || err "$base: groff warns:"$'\n'"$out"
	if LC_ALL=C grep -n '[^[:print:][:space:]]' "$f" > /dev/null; then
		err "$base: not ASCII: $(LC_ALL=C grep -n '[^[:print:][:space:]]' "$f" | head -3)"
	fi
	name=${base%.*}
	sect=${base##*.}
	want=$(tr '[:lower:]' '[:upper:]' <<< "$name")
	read -r _ th_name th_sect _ < <(grep -m1 '^\.TH ' "$f" || echo ". - -")
	[[ $th_name == "$want" && $th_sect == "$sect" ]] ||
		err "$base: .TH is \"$th_name $th_sect\", want \"$want $sect\""
done
((pages > 0)) || err "no pages in $man"

# --- (b) every public class is documented -------------------------------
# Prints "header class" for each class defined at namespace scope outside
# namespaces detail and testing.
classes=$(awk '
	FNR == 1 { depth = 0; incomment = 0 }
	{
		line = $0
		# Comments and literals cannot open or close a scope.
		if (incomment) {
			if (!sub(/^.*\*\//, "", line)) next
			incomment = 0
		}
		gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, "", line)
		if (sub(/\/\*.*$/, "", line)) incomment = 1
		sub(/\/\/.*$/, "", line)
		gsub(/"([^"\\]|\\.)*"/, "\"\"", line)
		gsub(/\047([^\047\\]|\\.)\047/, "\047\047", line)

		# At namespace scope: every open brace is a namespace, none of
		# them detail or testing.
		public = 1
		for (i = 1; i <= depth; i++)
			if (stack[i] == "o" || stack[i] ~ /^n:(.*::)?(detail|testing)(::|$)/)
				public = 0
		if (public) {
			t = line
			sub(/^[ \t]*/, "", t)
			sub(/^template[ \t]*<[^>]*>[ \t]*/, "", t)
			if (t ~ /^(class|struct)[ \t]/ && !(t ~ /;[ \t]*$/ && t !~ /\{/)) {
				sub(/^(class|struct)[ \t]+/, "", t)
				while (sub(/^\[\[[^]]*\]\][ \t]*/, "", t))
					;
				if (match(t, /^[A-Za-z_][A-Za-z0-9_]*/)) {
					f = FILENAME
					sub(/^.*\//, "", f)
					print f, substr(t, 1, RLENGTH)
				}
			}
		}

		# The braces of this line: a namespace line opens a namespace
		# scope with its first brace; every other brace opens "o".
		ns = ""
		if (match(line, /^[ \t]*(inline[ \t]+)?namespace([ \t]+[A-Za-z_][A-Za-z0-9_:]*)?[ \t]*\{/)) {
			ns = substr(line, RSTART, RLENGTH)
			sub(/^[ \t]*(inline[ \t]+)?namespace[ \t]*/, "", ns)
			sub(/[ \t]*\{$/, "", ns)
			ns = "n:" (ns == "" ? "(anonymous)" : ns)
		}
		for (i = 1; i <= length(line); i++) {
			c = substr(line, i, 1)
			if (c == "{") {
				stack[++depth] = ns != "" ? ns : "o"
				ns = ""
			} else if (c == "}" && depth > 0) {
				depth--
			}
		}
	}' "$src"/lib/include/ndk/*.hpp | sort -u -k2,2)

# The headings of every .3 page: the .SS lines and the tag line after each
# .TP, with font escapes, \& and quotes removed.
headings=$(awk '
	/^\.SS/ { print; next }
	tp && !/^\.\\"/ { print; tp = 0; next }
	/^\.TP/ { tp = 1 }' "$man"/*.3 |
	sed -e 's/\\f[BIRP]//g' -e 's/\\f([A-Z][A-Z]//g' -e 's/\\f\[[^]]*\]//g' \
	    -e 's/\\&//g' -e 's/\\-/-/g' -e 's/"//g')

nclasses=0
own=0
while read -r header class; do
	[[ -n $class ]] || continue
	nclasses=$((nclasses + 1))
	if [[ -e $man/ndk_$class.3 ]]; then
		own=$((own + 1))
	elif ! grep -qw -- "$class" <<< "$headings"; then
		err "ndk::$class ($header) has no page: add Documentation/man/ndk_$class.3," \
			"or describe it under a .SS or .TP heading naming it on the page of the class that uses it"
	fi
done <<< "$classes"
((nclasses > 0)) || err "found no class in lib/include/ndk/*.hpp (the parser is broken)"

# --- (c) the overview lists every page ----------------------------------
if [[ -e $man/libndk.3 ]]; then
	seealso=$(awk '/^\.SH/ { on = /SEE ALSO/; next } on' "$man/libndk.3")
	for f in "$man"/*.3; do
		name=${f##*/}
		name=${name%.3}
		[[ $name == libndk ]] && continue
		grep -q "^\.BR $name (3)" <<< "$seealso" ||
			err "libndk.3: SEE ALSO does not list $name(3)"
	done
else
	err "no overview page Documentation/man/libndk.3"
fi

((fail == 0)) || exit 1
echo "man-pages: $pages pages render without warnings;" \
	"$nclasses public classes documented ($own with a page of their own)"
