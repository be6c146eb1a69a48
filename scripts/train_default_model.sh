#!/usr/bin/env bash
# Train medlink's default term encoder (docs/training.md, "The default model"): all-MiniLM-L6-v2 aligned on the
# synonyms of the open terminologies plus NCBI-disease (train + dev) and BC5CDR (train) mentions. No test mention,
# no BC5CDR dev mention, nothing of CADEC: those are the benchmarks it is scored on.
#
#   stage 1  supervised InfoNCE over random concept batches
#   stage 2  the same loss over model-mined batches: each concept with the concepts stage 1 confuses it with,
#            re-mined every epoch (DILBERT re-sampling, Liang et al. online negatives)
#
# Run from the repository root with ../shared beside it and medlink installed (.venv/bin on PATH). It picks a GPU
# when torch sees one; on 2 CPU cores the same recipe takes days, so shorten it with STEPS1 / STEPS2 (or cap each
# stage with TIME1 / TIME2 seconds). FREEZE (default 1) freezes the token embeddings and the lowest layer, so the
# embeddings stay those medlink-fast shares. Re-running resumes an interrupted stage.
#
# Ran once on an H100 (2026-11-23, docs/training.md "A GPU session"): the result scored below the shipped default
# model on names alone, so it was not shipped.
set -euo pipefail
data=${MEDLINK_DATA:-../shared/data}
work=${WORK:-build/default-model}
base=${BASE:-minilm}
batch=${BATCH:-1024}
mkdir -p "$work"

bash "$(dirname "$0")/compile_open_terminologies.sh" "$data" "$work/terms"

corpora=$data/corpora
common=(--terminology "$work/terms" --loss contrastive --batch-size "$batch" --max-len 24 --freeze-layers "${FREEZE:-1}"
        --mentions "pubtator:$corpora/ncbi-disease/NCBItrainset_corpus.txt"
        --mentions "pubtator:$corpora/ncbi-disease/NCBIdevelopset_corpus.txt"
        --mentions "pubtator:$corpora/bc5cdr/CDR_TrainingSet.PubTator.txt")
medlink train "${common[@]}" --base "$base" --sampler random --max-steps "${STEPS1:-1500}" --lr 5e-5 --seed 0 \
    ${TIME1:+--time-limit "$TIME1"} -o "$work/stage1"
medlink train "${common[@]}" --base "$work/stage1" --sampler mined --max-steps "${STEPS2:-3000}" --lr 3e-5 \
    --seed 1 ${TIME2:+--time-limit "$TIME2"} -o "$work/model"
