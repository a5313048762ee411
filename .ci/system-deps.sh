#!/usr/bin/env bash
# Debian packages the browser and rendering tests need, installed only when missing, so
# `make test` can call this every time:
#   chromium             Playwright drives Debian's browser (we never run `playwright install`)
#   libreoffice-impress  deck -> PDF;  poppler-utils: pdftoppm, PDF -> PNG pages
#   fonts-*              Calibri-compatible metrics (Carlito) and plain sans fonts, so text fits
#                        its boxes as it does in PowerPoint and the dashboard reads the same
set -euo pipefail

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium fonts-dejavu-core fonts-liberation)
command -v libreoffice >/dev/null 2>&1 || missing+=(libreoffice-impress fonts-crosextra-carlito)
command -v pdftoppm >/dev/null 2>&1 || missing+=(poppler-utils)
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "system-deps: missing ${missing[*]} and apt-get is not available;" \
        "install them by hand (the tests that need them are skipped)" >&2
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "system-deps: not root and no sudo; cannot install ${missing[*]} (the tests that need them are skipped)" >&2
        exit 0
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
