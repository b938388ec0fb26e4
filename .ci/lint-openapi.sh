#!/usr/bin/env bash
# Lint the generated OpenAPI document with Redocly CLI, pinned.
#
# Usage: .ci/lint-openapi.sh
#
# Installs @redocly/cli into a cache directory (REDOCLY_DIR, default
# ${TMPDIR:-/tmp}/redocly-cli-$VERSION) unless it is already there, then runs
# `redocly lint` on openapi/openapi.json with openapi/redocly.yaml. Exits
# non-zero when the document has lint errors (warnings are reported only).
set -euo pipefail

VERSION=2.77.0
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${REDOCLY_DIR:-${TMPDIR:-/tmp}/redocly-cli-$VERSION}
bin=$dir/node_modules/.bin/redocly

if [[ ! -x $bin ]] || [[ $("$bin" --version 2>/dev/null) != "$VERSION" ]]; then
	command -v npm >/dev/null || { echo "lint-openapi: npm is required" >&2; exit 1; }
	mkdir -p "$dir"
	[[ -f $dir/package.json ]] || echo '{"private": true}' >"$dir/package.json"
	npm install --prefix "$dir" --no-audit --no-fund --no-save "@redocly/cli@$VERSION" >&2
fi

cd "$root"
exec "$bin" lint --config openapi/redocly.yaml openapi/openapi.json
