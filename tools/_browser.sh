# Sourced by tools/test: make sure the console's browser tests have a Chromium.
#
# They drive the Debian package `chromium` through Playwright (never a browser that
# Playwright downloads). As root with apt, a missing browser is installed; otherwise
# they are skipped, and this says how to enable them.
if [ -n "${SVC_TEST_CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1 \
    || command -v chromium-browser >/dev/null 2>&1; then
  return 0 2>/dev/null || exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "== installing chromium for the console's browser tests (apt-get)"
  if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; then
    return 0 2>/dev/null || exit 0
  fi
  echo "   apt-get could not install chromium." >&2
fi
echo "NOTICE: no Chromium here, so the console's browser tests will be skipped." >&2
echo "        To run them: apt-get install chromium (as root), or set" >&2
echo "        SVC_TEST_CHROMIUM=/path/to/chromium." >&2
