#!/usr/bin/env bash
# The TOML subset parser (core/config/toml) against Python's tomllib, the reference: every document
# of our valid corpora (the unit test's table, the design's example and the other fuzz seeds) is
# accepted by ours and by tomllib with the same values; every document ours accepts anywhere in
# the corpora, invalid table included, tomllib accepts too (ours is a subset of TOML, never a
# dialect). AJ_TOML_CORPUS=DIR adds a directory (e.g. libFuzzer's build/fuzz/corpus/fuzz_toml).
# No jail: no fixture.
. "$(dirname "$0")/lib.sh"

DUMP=$AJ_BUILD/tests/helpers/tomldump
UNIT=$AJ_BUILD/tests/unit/test_toml
if ! python3 -c 'import tomllib' 2>/dev/null; then
	skip "differential test against tomllib" "python3 >= 3.11 with tomllib is not installed"
	done_testing
fi
[ -x "$DUMP" ] && [ -x "$UNIT" ] || bail "build $DUMP and $UNIT first"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
AJ_TOML_EXPORT=$TMP "$UNIT" >/dev/null
ok $? "the unit test's documents are exported"

# compare FILE…: for each file ours accepts, tomllib must accept it with the same values; prints
# one line per disagreement and "checked N accepted M".
compare() {
	python3 - "$DUMP" "$@" <<'PY'
import json, subprocess, sys, tomllib
dump, files = sys.argv[1], sys.argv[2:]
accepted = 0
for f in files:
    r = subprocess.run([dump, f], capture_output=True)
    if r.returncode != 0:
        continue
    accepted += 1
    ours = json.loads(r.stdout)
    try:
        with open(f, "rb") as fp:
            ref = tomllib.load(fp)
    except Exception as e:
        print(f"{f}: accepted by ours, refused by tomllib: {e}")
        continue
    if ours != ref:
        print(f"{f}: ours {json.dumps(ours, ensure_ascii=False)} != tomllib {ref!r}")
print(f"checked {len(files)} accepted {accepted}")
PY
}

good=()
for f in "$TMP"/valid-*.toml "$AJ_SRC"/tests/fuzz/corpus/fuzz_toml/*.toml; do
	case $f in */bad-*) continue ;; esac # refused: below
	good+=("$f")
	name=${f#"$AJ_SRC"/}
	out=$("$DUMP" "$f" 2>&1)
	ok $? "ours accepts ${name#"$TMP"/}" || diag "$out"
done
out=$(compare "${good[@]}")
is "$out" "checked ${#good[@]} accepted ${#good[@]}" "tomllib accepts them all, with the same values"

bad=("$TMP"/invalid-*.toml "$AJ_SRC"/tests/fuzz/corpus/fuzz_toml/bad-*.toml)
out=$(compare "${bad[@]}")
is "$out" "checked ${#bad[@]} accepted 0" \
	"ours refuses every invalid document"

if [ -n "${AJ_TOML_CORPUS:-}" ]; then
	files=("$AJ_TOML_CORPUS"/*)
	out=$(compare "${files[@]}")
	like "$out" "^checked [0-9]+ accepted [0-9]+$" "tomllib agrees on every document of \
$AJ_TOML_CORPUS that ours accepts"
	diag "$out"
fi
done_testing
