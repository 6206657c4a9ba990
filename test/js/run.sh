#!/usr/bin/env bash
# Runs the JavaScript SDK end-to-end tests against a freshly built Ebb.
#
#   test/js/run.sh                 # all test files
#   test/js/run.sh tests/ttl.test.js   # some of them (paths relative to test/js)
#
# Builds ./cmd/ebb into a temporary directory, installs the locked npm
# dependencies if node_modules is missing, and runs `node --test`. Each
# test file starts its own server (in memory, plain HTTP, manual clock) on
# a free loopback port and stops it when done. Needs Go and Node.js >= 20.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../node-suite.sh
source "$here/../node-suite.sh"
node --test --test-timeout=60000 "$@"
