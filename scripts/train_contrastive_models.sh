#!/usr/bin/env bash
# The two contrastive candidates of docs/training.md (2026-11-22, second round), trained in sequence:
#   A  supervised InfoNCE, random batches, names of the open terminologies + NCBI-disease and BC5CDR training
#      mentions (OD; no test or dev mention), 500 steps from all-MiniLM-L6-v2      (30 min on 2 CPU cores)
#   B  A continued for 500 steps on model-mined batches (each concept with the 3 concepts A confuses it with)
#                                                                                  (36 min)
# Run from the repository root with ../shared beside it and medlink installed (.venv/bin on PATH); the training
# terminology is the one scripts/train_candidate_model.sh compiles. Score them with
#   medlink benchmark benchmarks/candidate.toml -o docs/candidate-benchmarks.md
set -euo pipefail
corpora=${MEDLINK_DATA:-../shared/data}/corpora
terms=${TERMS:-build/candidate-model/terms}
[ -d "$terms" ] || { echo "compile $terms first (see scripts/train_candidate_model.sh)" >&2; exit 1; }
mentions=(--mentions "pubtator:$corpora/ncbi-disease/NCBItrainset_corpus.txt"
          --mentions "pubtator:$corpora/bc5cdr/CDR_TrainingSet.PubTator.txt")
common=(--terminology "$terms" "${mentions[@]}" --loss contrastive --batch-size 256 --max-steps 500 --max-len 24
        --freeze-layers 2)
medlink train "${common[@]}" --base minilm --sampler random --lr 3e-5 --seed 0 -o build/contrastive-model/model
medlink train "${common[@]}" --base build/contrastive-model/model --sampler mined --lr 5e-5 --seed 1 \
    -o build/contrastive-mined/model
