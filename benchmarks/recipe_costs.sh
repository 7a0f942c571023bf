#!/usr/bin/env bash
# What each part of the recipe costs: the host's share per image (bench input, OURS against
# decoding alone) and the training step's (bench train, train's step on a cached batch), with
# the defaults on and with each part switched off, on photo-like JPEGs at 224x224:
#   benchmarks/recipe_costs.sh PROJECT OUT
set -euo pipefail
project=$1 out=$2
python=${PYTHON:-python}
package=$(basename "$(ls -d "$project"/*/__main__.py | head -1 | xargs dirname)")
cd "$project"
run() { echo "=== $*"; "$python" -m "$package" "$@" --output-dir "$out" 2>&1 | grep -E "images/s|s a step|/"; }
host=(bench input --synthetic --image-size 224 --batch-size 64 --images-per-pass 1024 --repeats 3)
run "${host[@]}"
run "${host[@]}" --mixup 0 --cutmix 0
run "${host[@]}" --mix-probability 1
run "${host[@]}" --rand-augment 0.5 --images-per-pass 256 --repeats 1
records=(--data-dir "$out/bench-input/224x224-1024" --train-files "*.tfrec" --valid-files "")
step=(bench train --weights none --image-size 224 --batch-size 8 --variants CACHED,OURS "${records[@]}")
run "${step[@]}"
run "${step[@]}" --ema 0
run "${step[@]}" --crop-area 1.0 --no-flip
run "${step[@]}" --weight-decay 0 --label-smoothing 0
