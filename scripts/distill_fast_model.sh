#!/usr/bin/env bash
# Distil medlink's default encoder into the 3-layer `medlink-fast` (src/medlink/resources/fast-model/MODEL_CARD.md):
# teacher layers 0, 3 and 5 kept, token embeddings frozen (shared with the teacher), then packaged in fp16 without the
# tensors it shares with the default model. The shipped model: STEPS=7760 (two passes of 256 texts) on one H200
# (DEVICE=auto finds it; the teacher runs there too), 338 s, from today's default model (A after the disease
# fine-tuning of scripts/finetune_disease_model.sh), 2026-11-26. On 2 CPU cores the default 800 steps, capped at
# TIME=2400 s, reach about a fifth of a pass.
#
# Run from the repository root with ../shared beside it and medlink installed. Re-running resumes.
set -euo pipefail
data=${MEDLINK_DATA:-../shared/data}
work=${WORK:-build/distilled}
mkdir -p "$work"

bash "$(dirname "$0")/compile_open_terminologies.sh" "$data" "$work/terms"

corpora=$data/corpora
medlink distill --teacher medlink --layers 0,3,5 --terminology "$work/terms" \
    --mentions "pubtator:$corpora/ncbi-disease/NCBItrainset_corpus.txt" \
    --mentions "pubtator:$corpora/bc5cdr/CDR_TrainingSet.PubTator.txt" \
    --max-steps "${STEPS:-800}" --time-limit "${TIME:-2400}" --device "${DEVICE:-auto}" -o "$work/model"
python scripts/package_default_model.py "$work/model" -o src/medlink/resources/fast-model --share-with default-model
