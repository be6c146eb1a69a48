#!/usr/bin/env bash
# Train the candidate biomedical term encoder of docs/training.md: all-MiniLM-L6-v2 aligned on terminology synonyms.
#
# Run from the repository root with ../shared beside it and medlink installed (.venv/bin on PATH):
#   bash scripts/train_candidate_model.sh      # 35 minutes on 2 CPU cores (one pass over 56,325 concepts)
# Re-running resumes an interrupted training from its last checkpoint. Then score it against its base with
#   medlink benchmark benchmarks/candidate.toml -o docs/candidate-benchmarks.md
set -euo pipefail
data=${MEDLINK_DATA:-../shared/data/terminologies}
work=${WORK:-build/candidate-model}
mkdir -p "$work"

# Synonyms from the open terminologies only: no corpus mentions, so every benchmark stays zero-shot for the model.
[ -d "$work/terms" ] || medlink terminology compile \
    "ctd:$data/medic/CTD_diseases.tsv.gz" \
    "mesh-desc-tsv:$data/mesh/mesh_descriptors.tsv.gz" \
    "obo:$data/obo/hp.obo.gz" \
    "obo:$data/obo/doid.obo.gz" \
    "drugbank:$data/drugbank/drugbank_vocabulary.csv.gz" \
    -o "$work/terms"

# Self-alignment on synonyms (SapBERT / CODER): multi-similarity loss over batches of 128 concepts x 2 names,
# concepts grouped by parent so that siblings are the in-batch negatives.
medlink train --terminology "$work/terms" --base minilm --loss ms --sampler siblings \
    --batch-size 256 --epochs 1 --lr 5e-5 --max-len 24 --seed 0 -o "$work/model"
