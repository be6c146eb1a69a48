#!/usr/bin/env bash
# One model per loss, each given the same wall-clock budget on this machine, then scored by one benchmark run:
#   bash scripts/loss_ablation.sh        # 5 x 6 minutes of training, then about 15 minutes of encoding
# Run from the repository root with ../shared beside it and medlink installed (.venv/bin on PATH). Uses the training
# terminology that scripts/train_candidate_model.sh compiles (synonyms of open vocabularies, no corpus mention).
set -euo pipefail
work=${WORK:-build/ablation}
terms=${TERMS:-build/candidate-model/terms}
budget=${BUDGET:-360}   # seconds of training per loss
[ -d "$terms" ] || { echo "compile $terms first (see scripts/train_candidate_model.sh)" >&2; exit 1; }

# Same data, batches (128 concepts x 2 names, at random), learning rate and schedule for every loss; the schedule
# assumes 110 steps, about what 6 minutes allow, so each run ends close to the end of its decay.
common=(--terminology "$terms" --base minilm --sampler random --batch-size 256 --lr 5e-5 --max-len 24
        --freeze-layers 2 --max-steps 110 --seed 0 --time-limit "$budget")
medlink train "${common[@]}" --loss triplet -o "$work/triplet"
medlink train "${common[@]}" --loss batch-hard -o "$work/batch-hard"
medlink train "${common[@]}" --loss ms -o "$work/ms"
medlink train "${common[@]}" --loss ms --relations 1.0 -o "$work/ms-relations"
medlink train "${common[@]}" --loss contrastive -o "$work/contrastive"
medlink benchmark benchmarks/ablation.toml -o docs/loss-ablation.md
