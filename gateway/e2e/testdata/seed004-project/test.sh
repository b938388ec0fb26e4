#!/bin/sh
# The fixture project's test suite: exit status 0 when every case passes.
. ./lib.sh
fail=0
check() {
	got=$(add "$1" "$2")
	if [ "$got" != "$3" ]; then
		echo "FAIL: add $1 $2 = $got, want $3"
		fail=1
	fi
}
check 1 2 3
check 20 22 42
check -5 5 0
[ $fail -eq 0 ] && echo "ok: 3 cases"
exit $fail
