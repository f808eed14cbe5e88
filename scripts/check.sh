#!/usr/bin/env bash
# The lint, format and type checks that CI runs before the tests; run it before you push.
set -euo pipefail
cd "$(dirname "$0")/.."
ruff check .
ruff format --check .
cython-lint spacy_bioner
mypy
