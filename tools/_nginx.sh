# Sourced by tools/test: make sure the reverse-proxy test has nginx.
#
# It runs Debian's package `nginx` as an unprivileged process on loopback, with the
# configuration of docs/deployment.md. As root with apt, a missing nginx is installed;
# otherwise that test is skipped, and this says how to enable it.
if [ -n "${SVC_TEST_NGINX:-}" ] || command -v nginx >/dev/null 2>&1 \
    || [ -x /usr/sbin/nginx ]; then
  return 0 2>/dev/null || exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "== installing nginx for the reverse-proxy test (apt-get)"
  if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends nginx-light >/dev/null 2>&1 \
      || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null; then
    return 0 2>/dev/null || exit 0
  fi
  echo "   apt-get could not install nginx." >&2
fi
echo "NOTICE: no nginx here, so the reverse-proxy test will be skipped." >&2
echo "        To run it: apt-get install nginx (as root), or set" >&2
echo "        SVC_TEST_NGINX=/path/to/nginx." >&2
