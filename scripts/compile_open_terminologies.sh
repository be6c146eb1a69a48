#!/usr/bin/env bash
# Compile the six open terminologies every training recipe here learns from (CTD MEDIC, MeSH descriptors and
# supplementary concepts, HPO, Disease Ontology, DrugBank open vocabulary) into one terminology folder.
#
#   bash scripts/compile_open_terminologies.sh DATA_DIR OUTPUT_DIR      (does nothing if OUTPUT_DIR exists)
set -euo pipefail
terms=$1/terminologies
[ -d "$2" ] || medlink terminology compile \
    "ctd:$terms/medic/CTD_diseases.tsv.gz" \
    "mesh-desc-tsv:$terms/mesh/mesh_descriptors.tsv.gz" \
    "mesh-supp-tsv:$terms/mesh/mesh_supplementary.tsv.gz" \
    "obo:$terms/obo/hp.obo.gz" \
    "obo:$terms/obo/doid.obo.gz" \
    "drugbank:$terms/drugbank/drugbank_vocabulary.csv.gz" \
    -o "$2"
