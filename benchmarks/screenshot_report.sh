#!/usr/bin/env bash
# Render report.html in headless Chromium once and save a screenshot of its first screen (not part of CI: the
# browser is a large Debian package, `apt-get install -y chromium`). Look at the PNG to check the report as a
# person sees it.
#   benchmarks/screenshot_report.sh [REPORT_DIR] [OUT_PNG]      (defaults: report, REPORT_DIR/screenshot.png)
set -euo pipefail
dir="${1:-report}"
png="${2:-$dir/screenshot.png}"
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [ -z "$browser" ]; then
    echo "no chromium: install it with 'apt-get install -y chromium'" >&2
    exit 2
fi
html="$(cd "$dir" && pwd)/report.html"
[ -f "$html" ] || { echo "$html missing: run 'make report' (or dfltheory report --out $dir) first" >&2; exit 2; }
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,2000 \
    --screenshot="$(realpath -m "$png")" "file://$html" 2>/dev/null
echo "$png"
