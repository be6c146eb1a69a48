#!/usr/bin/env bash
# Disease fine-tuning of medlink's default encoder (docs/training.md, "A GPU session", job 2): supervised InfoNCE
# on CTD MEDIC names plus the NCBI-disease train + dev and BC5CDR training mentions (no test mention; BC5CDR's
# chemical mentions do not resolve in MEDIC and drop out), 1,000 random batches of 512 texts, embeddings and layer 0
# frozen; PACKAGE=1 then writes it in fp16 over src/medlink/resources/default-model (the shipped default).
#
# BASE is model A: build/contrastive-model/model as scripts/train_contrastive_models.sh writes it or, exactly as
# shipped, its fp16 package at commit 6017857:
#   mkdir -p build/model-a && git archive 6017857 src/medlink/resources/default-model | tar -x -C build/model-a
#   BASE=build/model-a/src/medlink/resources/default-model
# 59 s on one H100 (DEVICE=auto finds it). On 2 CPU cores a step of 512 texts takes several seconds: cap the run
# with TIME (seconds) or STEPS. Run from the repository root with ../shared beside it and medlink installed
# (.venv/bin on PATH). Re-running resumes.
set -euo pipefail
data=${MEDLINK_DATA:-../shared/data}
work=${WORK:-build/disease-model}
base=${BASE:-build/contrastive-model/model}
corpora=$data/corpora
[ -d "$work/terms" ] || medlink terminology compile "ctd:$data/terminologies/medic/CTD_diseases.tsv.gz" -o "$work/terms"
medlink train --terminology "$work/terms" --loss contrastive --sampler random --batch-size 512 --max-len 24 \
    --freeze-layers 1 --lr 3e-5 --seed 3 --max-steps "${STEPS:-1000}" ${TIME:+--time-limit "$TIME"} \
    --device "${DEVICE:-auto}" --base "$base" \
    --mentions "pubtator:$corpora/ncbi-disease/NCBItrainset_corpus.txt" \
    --mentions "pubtator:$corpora/ncbi-disease/NCBIdevelopset_corpus.txt" \
    --mentions "pubtator:$corpora/bc5cdr/CDR_TrainingSet.PubTator.txt" -o "$work/model"
if [ "${PACKAGE:-0}" = 1 ]; then
    python scripts/package_default_model.py "$work/model" -o src/medlink/resources/default-model
fi
