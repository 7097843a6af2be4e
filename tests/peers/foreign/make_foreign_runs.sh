#!/usr/bin/env bash
# Regenerates the committed runs in tests/peers/foreign/runs/ with the real tools (no model: a
# fixture provider for promptfoo, a fixture solver and mockllm for Inspect AI). Not part of
# `make test` (the runs are committed); run by `make foreign-runs`. Needs node/npm and python3,
# and installs both tools into a temporary directory. Pin other versions with
# PROMPTFOO_VERSION=... INSPECT_VERSION=... (the README beside this script names the ones used).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/runs"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
promptfoo_version="${PROMPTFOO_VERSION:-0.121.20}"
inspect_version="${INSPECT_VERSION:-0.3.285}"
mkdir -p "$out"

# promptfoo: the same suite twice, the provider's variant a then b; -o writes its output JSON
# (and, in a run of its own, its JSON lines).
(cd "$work" && npm init -y >/dev/null && npm install --no-audit --no-fund "promptfoo@$promptfoo_version" >/dev/null)
cp "$here/promptfoo/promptfooconfig.yaml" "$here/promptfoo/provider.js" "$work/"
for variant in a b; do
  for format in json jsonl; do
    (cd "$work" && FIXTURE_VARIANT=$variant PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 \
      PROMPTFOO_CONFIG_DIR="$work/.promptfoo" ./node_modules/.bin/promptfoo eval -c promptfooconfig.yaml \
      -o "$out/promptfoo_$variant.$format" --no-cache --no-table --no-write --no-progress-bar) || [ $? -eq 100 ]
  done  # promptfoo exits 100 when a test failed, as the fixture's tests are meant to
done

# Inspect AI: the fixture task for variant a and b, two epochs, in both log formats.
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "inspect-ai==$inspect_version"
cp "$here/inspect/fixture_task.py" "$work/"
for variant in a b; do
  for format in eval json; do
    (cd "$work" && ./venv/bin/inspect eval fixture_task.py -T variant=$variant --model mockllm/model --epochs 2 \
      --no-fail-on-error --log-format $format --log-dir "logs/$variant-$format" --display plain)
    cp "$work/logs/$variant-$format"/*."$format" "$out/inspect_$variant.$format"
  done
done
echo "wrote $(ls "$out" | tr '\n' ' ')"
