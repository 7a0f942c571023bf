#!/usr/bin/env bash
# The recipe against today's recipe before it and a plain Keras loop, on held-out test labels:
#   benchmarks/compare_recipes.sh PROJECT DATA OUT EPOCHS SEED...
# PROJECT is a rendered project (with its .venv or this repository's), DATA a competition of
# images and a CSV with solution.csv (benchmarks/fashion_mnist.py), OUT a folder for the runs.
set -euo pipefail
project=$1 data=$2 out=$3 epochs=$4; shift 4
python=${PYTHON:-python}
package=$(basename "$(ls -d "$project"/*/__main__.py | head -1 | xargs dirname)")
common=(--data-dir "$data" --backbone small-cnn --weights none --image-size 32 --num-classes 10
        --learning-rate 1e-3 --metric accuracy --epochs "$epochs" --fold 0)
# The recipe before its winning parts: crop, flip, warm-up and cosine decay, Adam.
before=(--mixup 0 --cutmix 0 --label-smoothing 0 --weight-decay 0 --ema 0 --stochastic-depth 0)
here=$(cd "$(dirname "$0")" && pwd)
cd "$project"
for seed in "$@"; do
  for recipe in default before; do
    flags=(); [ "$recipe" = before ] && flags=("${before[@]}")
    run="$out/$recipe-seed$seed"
    "$python" -m "$package" train "${common[@]}" "${flags[@]}" --seed "$seed" --output-dir "$run" > "$run.log" 2>&1
    "$python" -m "$package" predict "${common[@]}" "${flags[@]}" --seed "$seed" --output-dir "$run" >> "$run.log" 2>&1
    "$python" -m "$package" score --data-dir "$data" --output-dir "$run" --solution "$data/solution.csv" > "$run.score" 2>&1
    echo "$recipe seed $seed: $(grep -m1 -i 'accuracy' "$run.score")"
  done
  "$python" "$here/plain_keras.py" "$data" --folds-csv "$out/default-seed$seed/fold0/folds.csv" \
    --epochs "$epochs" --seed "$seed" | sed "s/^/seed $seed: /"
done
