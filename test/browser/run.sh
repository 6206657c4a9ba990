#!/usr/bin/env bash
# Runs the Ebb Explorer browser tests against a freshly built Ebb.
#
#   test/browser/run.sh                       # all test files
#   test/browser/run.sh tests/explorer.test.js
#
# Builds ./cmd/ebb into a temporary directory, installs the locked npm
# dependencies (playwright-core only; no browser download) if
# node_modules is missing, and runs `node --test`. The tests drive
# Debian's /usr/bin/chromium (CHROMIUM_PATH overrides it) and write
# screenshots to test/browser/artifacts/.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

bindir="$(mktemp -d "${TMPDIR:-/tmp}/ebb-browser-e2e.XXXXXX")"
trap 'rm -rf "$bindir"' EXIT

echo "building ebb..." >&2
(cd "$root" && go build -o "$bindir/ebb" ./cmd/ebb)
export EBB_BIN="$bindir/ebb"

cd "$here"
if [ ! -d node_modules ]; then
  npm ci --no-audit --no-fund
fi

if [ "$#" -eq 0 ]; then
  set -- tests/*.test.js
fi
node --test --test-concurrency=1 --test-timeout=120000 "$@"
