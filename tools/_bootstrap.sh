# Sourced by tools/serve and tools/test: make .venv and install the project into it.
#
# The install is skipped when nothing that shapes it has changed since the last one
# (a stamp over pyproject.toml, setup.py, the kernel sources and the extras asked for),
# so a second run starts in seconds.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

EXTRAS="${1:-}"
PYTHON="${PYTHON:-python3}"

if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
  echo "svc needs Python 3.11 or newer as '$PYTHON' (set PYTHON=/path/to/python3.11)." >&2
  exit 1
fi

if [ ! -x .venv/bin/python ]; then
  echo "Creating .venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip setuptools wheel
fi

stamp_now="$( { echo "extras=$EXTRAS"; cat pyproject.toml setup.py; cat kernels/*.pyx kernels/*.pxd 2>/dev/null || true; } | sha256sum | cut -d' ' -f1)"
stamp_file=.venv/.svc-install-stamp
if [ ! -f "$stamp_file" ] || [ "$(cat "$stamp_file")" != "$stamp_now" ]; then
  echo "Installing svc${EXTRAS:+ [$EXTRAS]} into .venv (compiling the audio kernels)"
  target="."
  [ -n "$EXTRAS" ] && target=".[$EXTRAS]"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e "$target"
  echo "$stamp_now" > "$stamp_file"
fi
