#!/usr/bin/env bash
# Prove that binder/requirements.txt alone serves the executive app: install it into a clean
# virtual environment, then run the real-browser test against that environment's Voila.
# Usage (from anywhere): binder/verify.sh [VENV_DIR]   (default: a fresh temporary folder)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${1:-$(mktemp -d)/binder-venv}"
PYTHON="${PYTHON:-python3}"

"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
(cd "$ROOT" && "$VENV/bin/python" -m pip install --quiet -r binder/requirements.txt)
"$VENV/bin/python" -c "import cluster_decide.widgets, voila; print('installed:', voila.__version__)"

# The test itself runs from the project's own environment (pytest, playwright); Voila and the
# kernel run from the clean one.
cd "$ROOT"
CD_VOILA_PYTHON="$VENV/bin/python" "$ROOT/.venv/bin/python" -m pytest -q -p no:cacheprovider \
    tests/workbook/test_workbook_browser.py
