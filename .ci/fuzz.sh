#!/usr/bin/env bash
# .ci/fuzz.sh: runs every fuzz target of the module for a short, bounded
# time (FUZZTIME, default 5s each), one after the other. The seed corpus
# and the inputs kept under testdata/fuzz already run with go test; this
# also explores a little beyond them, so a new crasher shows up in CI.
# A failing input is written to the package's testdata/fuzz: commit it.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-5s}
mapfile -t targets < <(grep -rl --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . | sort)
n=0
for file in "${targets[@]}"; do
	pkg=./$(dirname "${file#./}")
	for name in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(f \*testing\.F).*/\1/p' "$file"); do
		echo "fuzz $pkg $name ($FUZZTIME)"
		go test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" "$pkg"
		n=$((n + 1))
	done
done
echo "$n fuzz targets ran for $FUZZTIME each"
