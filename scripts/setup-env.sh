# Sourced by scripts/demo and scripts/test: the Debian packages and the Python virtualenv the project needs.
# Idempotent: a second run installs nothing new.

APT_PACKAGES=(${APT_PACKAGES:-})

ensure_apt() {
  local missing=()
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "== apt: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# $1: which lock to install, `service` (the service and what setup builds with: scripts/demo) or `dev`
# (the same and the tests' tools: scripts/test). Every package comes from requirements/$1.txt, checked
# against its sha256 there (scripts/lock writes it); the project and its Python client are then installed
# editable without their dependencies and without build isolation, so nothing unlocked is fetched.
ensure_venv() {
  local lock="requirements/$1.txt"
  local python="${PYTHON:-python3.11}"
  command -v "$python" >/dev/null 2>&1 || python=python3
  if [ ! -x .venv/bin/python ]; then
    echo "== python: creating .venv"
    "$python" -m venv .venv
    .venv/bin/pip install -q --upgrade pip
  fi
  local stamp=".venv/.installed-$(cat "$lock" pyproject.toml clients/python/pyproject.toml | sha256sum | cut -c1-16)-$1"
  if [ ! -f "$stamp" ]; then
    echo "== python: installing $lock (hash-checked)"
    if ! { .venv/bin/pip install -q --require-hashes -r "$lock" &&
      .venv/bin/pip install -q --no-deps --no-build-isolation -e . -e clients/python; } >.venv/pip-install.log 2>&1; then
      cat .venv/pip-install.log >&2
      echo "pip install failed (log: .venv/pip-install.log)" >&2
      return 1
    fi
    touch "$stamp"
  fi
  ensure_age_network
  ensure_face_model
  ensure_translations
  ensure_docs_site
}

# The documentation site (docs/, mkdocs.yml) built strictly into .docs-site/, which the service serves at
# /docs/: a broken link or a page missing from the nav stops the setup. Offline: no font or script from a CDN.
ensure_docs_site() {
  if ! NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet; then
    echo "the documentation site did not build: see the warnings above" >&2
    return 1
  fi
}

# The holder match's descriptor model comes inside a PyPI package; its sha256 is checked here at
# setup time (and again before it is loaded), so a wrong file fails the install, not a user's session.
ensure_face_model() {
  if ! .venv/bin/python -m checks.face_match; then
    echo "the face descriptor model failed its check: see the message above" >&2
    return 1
  fi
}

# axe-core (npm, pinned and integrity-checked) for the browser tests' accessibility checks. Needs npm.
ensure_axe_core() {
  .venv/bin/python scripts/install_axe_core.py
}

# The tests' wallet side, run by node: the cross-device phone wallet and the check of the service's signed
# requests (npm: OpenID4VP and mdoc libraries, locked by tests/support/wallet/package-lock.json and
# integrity-checked, no install scripts run) into .test-wallet/. Needs npm.
ensure_test_wallet() {
  .venv/bin/python scripts/install_test_wallet.py
}

# The hosted flow's catalogs (flow/locale/*.po, committed) compiled to .mo with GNU gettext's msgfmt.
ensure_translations() {
  ensure_apt gettext
  .venv/bin/python scripts/compile_translations.py
}

# The two age networks are converted from pinned npm packages to ONNX once, hash-checked before and
# after (scripts/build_age_network.py, scripts/build_face_description_network.py), and the holder match's
# descriptor network from its PyPI model file (scripts/build_face_match_network.py); a second run only
# re-hashes the models. Needs npm.
ensure_age_network() {
  local script
  for script in build_age_network build_face_description_network build_face_match_network; do
    if ! .venv/bin/python "scripts/$script.py"; then
      echo "an age network could not be built (scripts/$script.py): see the message above" >&2
      return 1
    fi
  done
}
