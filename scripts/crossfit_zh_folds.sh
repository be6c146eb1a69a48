#!/usr/bin/env bash
# Cross-fitted dense features for the Chinese set ranker (issue 42, docs/accuracy.md "Cross-fitted features"):
# one fold encoder per cross-fitting fold, each trained with medlink-zh's recipe (scripts/train_zh_model.sh) on
# CHIP-CDN train without that fold's mentions (`--hold-out-fold K`, folds by a hash of the text), an encoder on all
# of train with the same recipe, then the set ranker: each training mention's dense features come from the fold
# encoder that never saw it, new mentions' from the full encoder.
#
# Then the pair rescorer (`medlink train pair-rescorer`), attached to the ranker only if it wins on fold 0.
#
# EPOCHS=3 on 2 CPU cores (2026-11-27): 6.5-8 min per fold encoder, 6.5 min the full one, 2 min to encode the 37,633
# ICD names with each of the six, 2 min to fit the ranker, 11 min for one epoch of the rescorer: about 1 h 40 min.
# On a GPU (DEVICE=auto finds it) EPOCHS=100 is medlink-zh's recipe (~2 min per encoder on an H200; PARALLEL=3
# trains three at once, as one small model leaves most of the card idle) and RESCORER_EPOCHS can grow. Run on a lent
# H200 on 2026-11-27 with FULL_ENCODER=medlink-zh PARALLEL=5 EPOCHS=100: five encoders and the ranker in 385 s
# (scripts/gpu_zh_crossfit.py packs the data, runs this there and brings the ranker back). FULL_ENCODER names
# an encoder already trained with this recipe on all of train (medlink-zh is one) instead of training "full";
# RESCORER_EPOCHS=0 skips the rescorer. MEDLINK_DATA points at a packed copy of the data, WORK (default
# build/zh-crossfit) is where everything goes.
# Run from the repository root with ../shared beside it (or MEDLINK_DATA) and medlink[zh] installed. Re-running
# resumes: finished encoders are kept, an interrupted one continues from its checkpoint.
set -euo pipefail
cdn=${MEDLINK_DATA:-../shared/data}/corpora/chip-cdn
work=${WORK:-build/zh-crossfit}
folds=${FOLDS:-5}
epochs=${EPOCHS:-3}
parallel=${PARALLEL:-1}
mkdir -p "$work"
[ -d "$work/terms" ] || medlink terminology compile "code-table:$cdn/icd10_beijing_clinical_v601.tsv" --namespace CODE \
    -o "$work/terms"

train_encoder() {  # $1: output folder; further arguments go to medlink train
    local out=$1
    shift
    [ -f "$out/config.json" ] && return 0
    medlink train --terminology "$work/terms" --mentions "chip-cdn:$cdn/CHIP-CDN_train.json" --several-as-parts \
        --base e5-small --loss contrastive --sampler random --batch-size 256 --max-len 24 --freeze-layers 1 \
        --lr 1e-4 --epochs "$epochs" --seed 0 --checkpoint-every 1000 --device "${DEVICE:-auto}" -o "$out" "$@" \
        > "$out.log" 2>&1
}

jobs_running() { jobs -rp | wc -l; }
full=${FULL_ENCODER:-$work/full}
encoders=$(seq 0 $((folds - 1)))
[ -n "${FULL_ENCODER:-}" ] || encoders="$encoders full"
for k in $encoders; do
    if [ "$k" = full ]; then train_encoder "$work/full" & else
        train_encoder "$work/fold-$k" --hold-out-fold "$k" --folds "$folds" &
    fi
    while [ "$(jobs_running)" -ge "$parallel" ]; do wait -n; done
done
wait
fold_options=()
for k in $(seq 0 $((folds - 1))); do fold_options+=(--fold-encoder "$work/fold-$k"); done
medlink train set-ranker --terminology "$work/terms" --mentions "chip-cdn:$cdn/CHIP-CDN_train.json" \
    --folds "$folds" --encoder "$full" "${fold_options[@]}" --device "${DEVICE:-auto}" -o "$work/ranker"
medlink eval --ranker "$work/ranker" --terminology "$work/terms" --corpus "chip-cdn:$cdn/CHIP-CDN_dev.json" --json \
    > "$work/dev.json"
[ "${RESCORER_EPOCHS:-1}" = 0 ] && exit 0
# The second stage: the pair cross-encoder over the ranker's best candidates, started from fold 0's encoder (it never
# saw fold 0, where the fusion is fitted and checked), attached only when it beats the ranker there.
medlink train pair-rescorer --ranker "$work/ranker" --base "$work/fold-0" --held-out-fold 0 --learning-rate 1e-4 \
    --epochs "${RESCORER_EPOCHS:-1}" --device "${DEVICE:-auto}"
medlink eval --ranker "$work/ranker" --terminology "$work/terms" --corpus "chip-cdn:$cdn/CHIP-CDN_dev.json" --json \
    > "$work/dev-rescored.json"
