#!/usr/bin/env bash
# Prove that binder/requirements.txt alone serves the apps: install it into a clean virtual
# environment, run binder/postBuild against it, then run the real-browser tests that need the
# most of it (the executive app, and a deck exported from the dashboard) with that Voila.
# Usage (from anywhere): binder/verify.sh [VENV_DIR]   (default: a fresh temporary folder)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${1:-$(mktemp -d)/binder-venv}"
PYTHON="${PYTHON:-python3}"

"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
(cd "$ROOT" && "$VENV/bin/python" -m pip install --quiet -r binder/requirements.txt)
"$VENV/bin/python" -c "import cluster_decide.widgets, pptx, voila; print('installed:', voila.__version__)"
(cd "$ROOT" && PATH="$VENV/bin:$PATH" NB_PYTHON_PREFIX="$VENV" bash binder/postBuild)
"$VENV/bin/python" - <<'PY'
from jupyter_server.serverapp import ServerApp

app = ServerApp()
app.load_config_file()
culling = app.config.MappingKernelManager
assert culling.cull_idle_timeout > 0 and culling.cull_connected is False, culling
print("kernel culling on Binder:", dict(culling))
PY

# The test itself runs from the project's own environment (pytest, playwright); Voila and the
# kernel run from the clean one (PROJECT_PYTHON overrides the project environment's python).
cd "$ROOT"
CD_VOILA_PYTHON="$VENV/bin/python" "${PROJECT_PYTHON:-$ROOT/.venv/bin/python}" -m pytest -q -p no:cacheprovider \
    tests/workbook/test_workbook_browser.py -k "updates_in_the_browser or does_not_fit_exports"
