#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `pip install .` as the README gives it, offline: a fresh venv over Debian's
# numpy / setuptools / wheel, the package built by setup.py (here reusing this
# build tree through FLOE_BUILD_DIR), then the installed module and tools used
# from outside the source tree.
#   pip_install_test.sh SOURCE_DIR BUILD_DIR PYTHON3
set -eu
source_dir=$1 build_dir=$2 python3=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/floe-pip-XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! "$python3" -c "import venv, ensurepip" 2>/dev/null; then
  echo "SKIPPED: $python3 has no venv/ensurepip (Debian: python3-venv)"
  exit 77
fi
"$python3" -m venv --system-site-packages "$work/venv"
FLOE_BUILD_DIR="$build_dir" "$work/venv/bin/pip" install --quiet --no-build-isolation --no-index \
  --disable-pip-version-check "$source_dir"
cd "$work"
"$work/venv/bin/floe-convert" --help | grep -q -- "--calibration"
"$work/venv/bin/floe-convert" --graph "$source_dir/examples/mnist_mlp/model/mnist_mlp.meta" \
  --checkpoint "$source_dir/examples/mnist_mlp/model" --outputs softmax_linear/add \
  --input-shape images=1,784 -o "$work/mnist.floe" >/dev/null
for tool in floe-run floe-inspect floe-bench floe-embed; do
  "$work/venv/bin/$tool" --help >/dev/null
done
"$work/venv/bin/python" - "$work/mnist.floe" "$source_dir/examples/mnist_mlp/model/digit_7.npy" <<'PY'
import os, sys
import numpy as np
import floe
assert os.path.dirname(floe.__file__).startswith(sys.prefix) and "site-packages" in floe.__file__, floe.__file__
interpreter = floe.Interpreter(model_path=sys.argv[1])
interpreter.allocate_tensors()
inp, out = interpreter.get_input_details()[0], interpreter.get_output_details()[0]
interpreter.set_tensor(inp["index"], np.load(sys.argv[2]))
interpreter.invoke()
assert int(np.argmax(interpreter.get_tensor(out["index"]))) == 7
print("pip install: floe imported from", os.path.dirname(floe.__file__), "- digit 7 classified")
PY
