#!/usr/bin/env bash
# Compatibility battery: what a developer does all day works inside the jail, as root and as a
# user — a C project (gcc + make), a Python project (unittest, compileall, a venv), a Rust crate
# (cargo test --offline), and git in an existing repository (branch, commit, stash, rebase).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/toolchainlib.sh"
aj_setup
tc_setup
aj_skip_missing_whos "compatibility battery"

for who in "${AJ_WHOS[@]}"; do
	tc_use "$who"

	# ---- C: gcc + make
	if ! command -v gcc >/dev/null || ! command -v make >/dev/null; then
		skip "$who: C project with gcc and make" "gcc or make is not installed"
	else
		aj_fresh_ws "$who"
		mkdir -p "$WS/c"
		printf '#include <stdio.h>\n#include "greet.h"\nint main(void) { greet("jail"); return 0; }\n' >"$WS/c/main.c"
		printf 'void greet(const char *who);\n' >"$WS/c/greet.h"
		printf '#include <stdio.h>\n#include "greet.h"\nvoid greet(const char *who) { printf("hello, %%s\\n", who); }\n' >"$WS/c/greet.c"
		printf 'hello: main.o greet.o\n\t$(CC) -o $@ $^\n%%.o: %%.c greet.h\n\t$(CC) -O2 -Wall -c $<\nclean:\n\trm -f hello *.o\n' >"$WS/c/Makefile"
		aj_chown "$WS/c"
		aj_run "$who" "${TC_ENV[@]}" -- run -- sh -c 'cd c && make -s && ./hello && make -s clean && ls'
		is "$OUT" $'hello, jail\nMakefile\ngreet.c\ngreet.h\nmain.c' "$who: C project: make, run, make clean"
	fi

	# ---- Python: a package with its tests, byte-compiled, and a venv that imports it
	py_why=""
	aj_fresh_ws "$who"
	mkdir -p "$WS/py/calc"
	printf 'def add(a, b):\n    return a + b\n' >"$WS/py/calc/__init__.py"
	printf 'import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n' >"$WS/py/test_calc.py"
	aj_chown "$WS/py"
	[ -n "$TC_PY_WHY" ] && py_why=" (system python3: $TC_PY_WHY)"
	aj_run "$who" "${TC_ENV[@]}" -- run -- sh -c 'cd py && python3 -m unittest -q 2>&1 | tail -n1 &&
		python3 -m compileall -q calc && ls calc/__pycache__ | grep -c "^__init__" &&
		python3 -m venv .venv && .venv/bin/python -c "import calc; print(calc.add(20, 22))"'
	is "$OUT" $'OK\n1\n42' "$who: Python project: unittest, compileall, a venv that imports it$py_why"

	# ---- Rust: a library crate and its tests
	if [ -n "$TC_RUST_WHY" ]; then
		skip "$who: Rust crate: cargo test --offline" "$TC_RUST_WHY"
	else
		aj_fresh_ws "$who"
		aj_run "$who" "${TC_ENV[@]}" -- run -- sh -c 'cargo new -q --lib --vcs none rlib && cd rlib &&
			cargo test -q --offline 2>&1 | grep -c "test result: ok"'
		like "$OUT" "^[1-9]" "$who: Rust crate: cargo new --lib, cargo test --offline"
	fi

	# ---- git in an existing repository
	if ! command -v git >/dev/null; then
		skip "$who: git branch, commit, stash, rebase" "git is not installed"
	else
		aj_fresh_ws "$who"
		aj_host sh -c "cd '$WS' && git init -q -b main && git config user.email t@example.com &&
			git config user.name Tester && echo a >f && git add f && git commit -qm a" >/dev/null 2>&1
		aj_run "$who" "${TC_ENV[@]}" -- run -- sh -c '
			git checkout -qb feature && echo b >>f && git commit -qam b &&
			git checkout -q main && echo c >g && git add g && git commit -qm c &&
			echo dirty >>g && git stash -q && test "$(cat g)" = c && git stash pop -q &&
			git checkout -q -- g && git stash list | wc -l &&
			git checkout -q feature && git rebase -q main && git log --format=%s | tr "\n" " " &&
			git status --porcelain -uno | wc -l'
		is "$OUT" $'0\nb c a 0' "$who: git: branch, commit, stash and pop, rebase, clean status"
		is "$(aj_host git -C "$WS" log --format=%s feature | tr '\n' ' ')" "b c a " \
			"$who: … and the host sees the rebased branch"
	fi
done

done_testing
