#!/usr/bin/env bash
# graphbench on one GPU in one command: the CUDA tests, each LRGB-tuned recipe alone for a
# few epochs (device store on and off, eager and compiled), the GCN recipe with batches padded to
# buckets (eager, compiled with static shapes, and CUDA graphs), then the three full recipes at once,
# and one table at the end. About 10 minutes on one H200; it reaches no network. See docs/gpu.md.
#
#   scripts/gpu_check.sh                              # from anywhere; runs from the repository root
#   GPU_CHECK_WHEELS=~/wheels scripts/gpu_check.sh    # first: pip install --no-index from that folder
#   GPU_CHECK_DRY_RUN=1 scripts/gpu_check.sh          # print the commands, run none
#
# Environment (defaults in brackets):
#   GRAPHBENCH_DATA        raw-data root, read-only [../shared/data]
#   GPU_CHECK_WHEELS       a folder of wheels of PACKAGES below, installed offline before anything runs []
#   GPU_CHECK_OUT          where the run directories go [gpu_check/<date>_<time>]
#   GPU_CHECK_EPOCHS       epochs of each run alone [3]
#   GPU_CHECK_FULL_EPOCHS  epochs of the three runs at once [250, the recipes']
#   GPU_CHECK_BUDGET_S     seconds the whole check may take: the runs at once get what is left, less a
#                          minute for start-up and testing, as Lightning's max_time (at least 2 minutes) [600]
#   GPU_CHECK_FULL_MAX     that cap given instead (DD:HH:MM:SS) []
#   GPU_CHECK_RECIPES      recipes [gcn gine gatedgcn] (conf/experiment/lrgb-tuned/peptides-func-<recipe>.yaml)
#   GPU_CHECK_STORE        dataset.batch_on_device values [true false]
#   GPU_CHECK_COMPILE      model.compile values [false true]
#   GPU_CHECK_PADDED       runs of the GCN recipe with dataset.pad_to=buckets [eager compiled cudagraphs]:
#                          model.compile=false; model.compile=true; model.compile=true
#                          model.compile_mode=reduce-overhead (device store on)
#   PYTHON                 the interpreter [python]
# Tensors that DataLoader workers send travel by torch's file_system sharing strategy: every run sets
# it (graphbench.run.processes.share_tensors_through_files); file descriptors failed on the GPU machine.
set -euo pipefail

cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}
DATA=${GRAPHBENCH_DATA:-../shared/data}
OUT=${GPU_CHECK_OUT:-gpu_check/$(date +%Y-%m-%d_%H-%M-%S)}
EPOCHS=${GPU_CHECK_EPOCHS:-3}
FULL_EPOCHS=${GPU_CHECK_FULL_EPOCHS:-250}
BUDGET_S=${GPU_CHECK_BUDGET_S:-600}
read -r -a RECIPES <<<"${GPU_CHECK_RECIPES:-gcn gine gatedgcn}"
read -r -a STORES <<<"${GPU_CHECK_STORE:-true false}"
read -r -a COMPILES <<<"${GPU_CHECK_COMPILE:-false true}"
read -r -a PADDED <<<"${GPU_CHECK_PADDED-eager compiled cudagraphs}"
DRY=${GPU_CHECK_DRY_RUN:-0}
export PYTHONPATH="$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}" WANDB_MODE=offline HYDRA_FULL_ERROR=1

# what graphbench needs beyond torch, Lightning, torchmetrics, PyG, numba, SciPy and NumPy (pyproject.toml)
PACKAGES=(hydra-core==1.3.8 omegaconf==2.3.1 antlr4-python3-runtime==4.9.3 ogb==1.3.6 rdkit==2026.9.1
  pandas matplotlib pyyaml threadpoolctl filelock pytest)
# the import name of each required package, torch and friends included
MODULES=(torch lightning torchmetrics torch_geometric numba scipy numpy hydra omegaconf antlr4 ogb rdkit
  pandas matplotlib yaml threadpoolctl filelock pytest)

say() { printf '\n== %s\n' "$*"; }
run() {  # prints the command; runs it unless this is a dry run
  printf '+ %s\n' "$*"
  if [[ $DRY != 1 ]]; then "$@"; fi
}

if [[ -n ${GPU_CHECK_WHEELS:-} ]]; then
  say "installing from $GPU_CHECK_WHEELS (no network)"
  run "$PYTHON" -m pip install --no-index --find-links "$GPU_CHECK_WHEELS" "${PACKAGES[@]}"
fi

if [[ $DRY != 1 ]]; then
  missing=$("$PYTHON" - "${MODULES[@]}" <<'EOF'
import importlib.util, sys
print(" ".join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))
EOF
)
  if [[ -n $missing ]]; then
    echo "error: missing Python modules: $missing; bring wheels of ${PACKAGES[*]} and set GPU_CHECK_WHEELS (docs/gpu.md)" >&2
    exit 2
  fi
  if ! "$PYTHON" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    echo "error: torch sees no CUDA device ($("$PYTHON" -c 'import torch; print(torch.__version__)')); run this on a GPU machine" >&2
    exit 2
  fi
  if [[ ! -d $DATA/peptides-functional ]]; then
    echo "error: no $DATA/peptides-functional; set GRAPHBENCH_DATA to the raw-data root" >&2
    exit 2
  fi
  "$PYTHON" -c 'import torch; print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name()}")'
fi

failures=()

say "CUDA tests"
mapfile -t cuda_files < <(grep -rli --include='test_*.py' cuda tests | sort)
if ((${#cuda_files[@]})); then
  run "$PYTHON" -m pytest -q -o addopts= -p no:cacheprovider -k cuda "${cuda_files[@]}" || failures+=("CUDA tests")
else
  echo "no test file under tests/ mentions cuda" >&2 && failures+=("CUDA tests (none found)")
fi

say "each recipe alone, $EPOCHS epochs"
run_dirs=()
for recipe in "${RECIPES[@]}"; do
  for store in "${STORES[@]}"; do
    for compile in "${COMPILES[@]}"; do
      dir="$OUT/alone/$recipe-store_$store-compile_$compile"
      run_dirs+=("$dir")
      run "$PYTHON" run.py "experiment=lrgb-tuned/peptides-func-$recipe" trainer=gpu "trainer.max_epochs=$EPOCHS" \
        "dataset.batch_on_device=$store" "model.compile=$compile" "paths.data_dir=$DATA" "hydra.run.dir=$dir" ||
        failures+=("$dir")
    done
  done
done

say "the GCN recipe padded to buckets, $EPOCHS epochs"
for variant in "${PADDED[@]}"; do
  case $variant in
    eager) options=(model.compile=false) ;;
    compiled) options=(model.compile=true) ;;
    cudagraphs) options=(model.compile=true model.compile_mode=reduce-overhead) ;;
    *) echo "error: GPU_CHECK_PADDED holds $variant; valid: eager compiled cudagraphs" >&2 && exit 2 ;;
  esac
  dir="$OUT/alone/gcn-padded-$variant"
  run_dirs+=("$dir")
  run "$PYTHON" run.py experiment=lrgb-tuned/peptides-func-gcn trainer=gpu "trainer.max_epochs=$EPOCHS" \
    dataset.batch_on_device=true dataset.pad_to=buckets "${options[@]}" "paths.data_dir=$DATA" "hydra.run.dir=$dir" ||
    failures+=("$dir")
done

left=$((BUDGET_S - SECONDS - 60))  # SECONDS: since the script started
((left >= 120)) || left=120
FULL_MAX=${GPU_CHECK_FULL_MAX:-$(printf '00:00:%02d:%02d' $((left / 60)) $((left % 60)))}
say "the three recipes at once, $FULL_EPOCHS epochs (each capped at $FULL_MAX)"
pids=()
for recipe in "${RECIPES[@]}"; do
  dir="$OUT/together/$recipe"
  run_dirs+=("$dir")
  command=("$PYTHON" run.py "experiment=lrgb-tuned/peptides-func-$recipe" trainer=gpu "trainer.max_epochs=$FULL_EPOCHS"
    "trainer.max_time=$FULL_MAX" dataset.batch_on_device=true "paths.data_dir=$DATA" "hydra.run.dir=$dir")
  printf '+ %s &\n' "${command[*]}"
  if [[ $DRY != 1 ]]; then
    mkdir -p "$(dirname "$dir")"
    "${command[@]}" >"$dir.log" 2>&1 &
    pids+=("$!:$dir")
  fi
done
for entry in "${pids[@]}"; do
  wait "${entry%%:*}" || failures+=("${entry#*:} (log: ${entry#*:}.log)")
done

say "results (after $SECONDS s)"
run "$PYTHON" scripts/gpu_check_table.py "${run_dirs[@]}"
if ((${#failures[@]})); then
  printf 'failed: %s\n' "${failures[@]}" >&2
  exit 1
fi
