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
# shellcheck source=../node-suite.sh
source "$here/../node-suite.sh"
node --test --test-concurrency=1 --test-timeout=120000 "$@"
