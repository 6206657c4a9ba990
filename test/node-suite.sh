# Sourced by the node test suites' run.sh (test/js, test/browser): builds
# ./cmd/ebb into a temporary directory for the tests to start (EBB_BIN),
# with EBB_BUILD_FLAGS if set (EBB_BUILD_FLAGS=-race: a data race makes
# the server exit with status 66, which fails the test that stops it),
# installs the suite's locked npm packages if node_modules is missing,
# and leaves the shell in the suite's directory with the test files as
# "$@" (all of tests/*.test.js when none were given).
#
# REQUIRES: set -euo pipefail; $here is the suite's directory.

root="$(cd "$here/../.." && pwd)"
bindir="$(mktemp -d "${TMPDIR:-/tmp}/ebb-node-suite.XXXXXX")"
trap 'rm -rf "$bindir"' EXIT

echo "building ebb..." >&2
# shellcheck disable=SC2086 # the flags are words
(cd "$root" && go build ${EBB_BUILD_FLAGS:-} -o "$bindir/ebb" ./cmd/ebb)
export EBB_BIN="$bindir/ebb"

cd "$here"
if [ ! -d node_modules ]; then
  npm ci --no-audit --no-fund
fi
if [ "$#" -eq 0 ]; then
  set -- tests/*.test.js
fi
