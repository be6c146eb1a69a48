#!/usr/bin/env bash
# Reproduce medlink's default term encoder (model card: src/medlink/resources/default-model/README.md).
#
# Run from the repository root with ../shared beside it and medlink installed (.venv/bin on PATH):
#   bash scripts/train_default_model.sh            # about 45 minutes on 2 CPU cores (one pass over 56k concepts)
# Re-running resumes an interrupted training from its last checkpoint.
set -euo pipefail
data=${MEDLINK_DATA:-../shared/data/terminologies}
work=${WORK:-build/default-model}
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

python scripts/pack_default_model.py "$work/model"
