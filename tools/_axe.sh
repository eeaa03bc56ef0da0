# Sourced by tools/test: make sure the console's browser tests have axe-core, the
# accessibility checker they inject into each screen.
#
# It comes from the npm registry into .cache/axe (or the file named by SVC_TEST_AXE).
# Without npm, as root with apt, nodejs and npm are installed first; otherwise the
# accessibility checks are skipped, and this says how to enable them.
_axe_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.cache/axe"
if [ -n "${SVC_TEST_AXE:-}" ] || [ -f "$_axe_dir/node_modules/axe-core/axe.min.js" ]; then
  return 0 2>/dev/null || exit 0
fi
if ! command -v npm >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "== installing nodejs and npm for the console's accessibility checks (apt-get)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null \
    || echo "   apt-get could not install npm." >&2
fi
if command -v npm >/dev/null 2>&1; then
  echo "== installing axe-core for the console's accessibility checks (npm)"
  mkdir -p "$_axe_dir"
  if npm install --silent --no-audit --no-fund --prefix "$_axe_dir" axe-core@4 >/dev/null; then
    return 0 2>/dev/null || exit 0
  fi
  echo "   npm could not install axe-core." >&2
fi
echo "NOTICE: no axe-core here, so the console's accessibility checks will be skipped." >&2
echo "        To run them: npm install --prefix .cache/axe axe-core@4, or set" >&2
echo "        SVC_TEST_AXE=/path/to/axe.min.js." >&2
