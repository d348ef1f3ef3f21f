#!/usr/bin/env bash
# The GPU check, in one run on a machine with one CUDA GPU (the stages' limits add up to
# 8 minutes, so it finishes within them whatever hangs):
#   1. probe the GPU (sparsroof hw probe --device cuda) into gpu.yaml;
#   2. generate three matrices whose CSR SpMV working sets are about 200 MB, 500 MB and 1 GB;
#   3. run cuSPARSE CSR and COO SpMV (fp64) over them and the corpus (tests/corpus and
#      ../shared/corpus where present), each timed by graph, stream, sync and cold;
#   4. judge every run with 'sparsroof compare' against the bundled spec ($GPU_CHECK_SPEC,
#      h100-sxm by default) and against the probe's spec, and draw the bundled one's roofline;
#   5. summarise measured/bound per method and band, and the probe beside the spec.
# Everything goes to one folder: $OUT where set, else bench/out/gpu (7 files: the log,
# gpu.yaml, runs-SPEC.json, runs-probe.json, judged-SPEC.json, judged-probe.json and
# roofline-SPEC.png). $GPU_CHECK_CASES names other products than SpMV in fp64 (see
# gpu_check.py) and $GPU_CHECK_RUNS_S the runs stage's limit (160 s). Python wheels
# found in .whl/ are installed first, from those files
# only (a GPU machine may have no network). A failing stage is logged and the later ones
# still run; the exit code is the number of failed stages.
#
#   bash bench/gpu_check.sh
set -u -o pipefail

cd "$(dirname "$0")/.." || exit 99
ROOT=$PWD
OUT=${OUT:-$ROOT/bench/out/gpu}
SPEC=${GPU_CHECK_SPEC:-h100-sxm}
WORK=${GPU_CHECK_WORK:-${TMPDIR:-/tmp}/sparsroof-gpu-check}
PY=${PYTHON:-python3}
mkdir -p "$OUT" "$WORK/matrices"
LOG=$OUT/gpu_check.log
: >"$LOG"
START=$(date +%s)
FAILED=0
export PYTHONUNBUFFERED=1 SPARSROOF_CACHE_DIR=$WORK/cache COLUMNS=80
export ROOT OUT SPEC WORK PY LOG START

log() { echo "[$(date +%H:%M:%S) +$(($(date +%s) - START))s] $*" | tee -a "$LOG" >&2; }
sr() { "$PY" -m sparsroof "$@"; }

install_wheels() {
    local wheels=("$ROOT"/.whl/*.whl)
    [ -e "${wheels[0]}" ] || { echo "no wheels in .whl/: using what is installed"; return 0; }
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$WORK/site" "${wheels[@]}"
}

environment() {
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv || true
    "$PY" --version
    "$PY" -c "import sparsroof, cupy, numpy, scipy, fast_matrix_market as f
print('sparsroof', sparsroof.__file__)
print('cupy', cupy.__version__, 'numpy', numpy.__version__, 'scipy', scipy.__version__,
      'fast_matrix_market', f.__version__)"
}

# large matrices: a CSR fp64 SpMV working set is about 12 B per entry and 20 B per row
generate() {
    local m=$WORK/matrices
    made() { [ -f "$m/$1.mtx" ] || { sr generate "${@:2}" -o "$m/part_$1.mtx" &&
        mv "$m/part_$1.mtx" "$m/$1.mtx"; }; }
    made stencil3d_124 stencil3d --n 124
    made random_3500k random --rows 3500000 --cols 3500000 --nnz 35000000 --seed 1
    made banded_4000k_h9 banded --n 4000000 --halfwidth 9
}

# judge RUNS JUDGED [compare options]: compare's JSON of the runs; exit 1 (a run beat its
# bound) is a finding the summary lists, not a failed stage
judge() {
    local runs=$1 judged=$2
    shift 2
    [ -f "$runs" ] || { echo "$runs: missing (the runs stage failed)"; return 1; }
    sr compare "$runs" -O json "$@" >"$judged"
    local rc=$?
    [ "$rc" -le 1 ] || return "$rc"
}

summarise() {
    "$PY" bench/gpu_check.py summary "$SPEC" "$OUT/gpu.yaml" "$OUT/judged-$SPEC.json" \
        "$OUT/judged-probe.json" | tee "$WORK/summary.txt"
}

# stage NAME SECONDS COMMAND...: run COMMAND (a program or one of the functions above)
# with a time limit, its output in the log; a failure is counted, and the script goes on
stage() {
    local name=$1 limit=$2 t0 rc
    shift 2
    log "stage $name: start"
    t0=$(date +%s)
    timeout "$limit" bash -c '"$@"' "$name" "$@" >>"$LOG" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ]; then
        FAILED=$((FAILED + 1))
        log "stage $name: FAILED (exit $rc$([ "$rc" -eq 124 ] && echo ", over $limit s"))" \
            "after $(($(date +%s) - t0)) s"
    else
        log "stage $name: done in $(($(date +%s) - t0)) s"
    fi
}

export ROOT OUT SPEC WORK PY LOG START
export -f log sr install_wheels environment generate judge summarise

stage wheels 20 install_wheels
export PYTHONPATH="$ROOT:$WORK/site${PYTHONPATH:+:$PYTHONPATH}"
stage environment 20 environment

# 1. the probe
stage probe 60 sr hw probe --device cuda -o "$OUT/gpu.yaml" --force
[ -f "$OUT/gpu.yaml" ] && cat "$OUT/gpu.yaml" >>"$LOG"

# 2. the large matrices
stage generate 90 generate

# 3. the runs: the corpus, then the generated matrices, each file name once (the run file
# is rewritten after every matrix, so a stage stopped by its limit keeps what it ran)
MATRICES=()
declare -A SEEN=()
for f in "$ROOT"/tests/corpus/*.mtx "$ROOT"/tests/corpus/*.smtx "$ROOT"/../shared/corpus/*.mtx \
    "$ROOT"/../shared/corpus/*.smtx "$WORK"/matrices/[!p]*.mtx; do
    [ -f "$f" ] || continue
    name=$(basename "$f")
    [ -n "${SEEN[$name]:-}" ] && continue
    SEEN[$name]=1
    MATRICES+=("$f")
done
log "matrices: ${#MATRICES[@]}"
stage runs "${GPU_CHECK_RUNS_S:-160}" "$PY" bench/gpu_check.py runs "$OUT" "$SPEC" "$OUT/gpu.yaml" "${MATRICES[@]}"

# 4. every run judged against the bundled spec (with its roofline) and the probe's
stage judge-"$SPEC" 50 judge "$OUT/runs-$SPEC.json" "$OUT/judged-$SPEC.json" \
    --plot "$OUT/roofline-$SPEC.png"
stage judge-probe 40 judge "$OUT/runs-probe.json" "$OUT/judged-probe.json"

# 5. the summary, and the tests that need a GPU
stage summary 15 summarise
stage gpu-tests 25 "$PY" -m pytest -q -p no:cacheprovider tests/host/test_gpu_bench.py -k on_a_gpu

[ -f "$WORK/summary.txt" ] && cat "$WORK/summary.txt" >&2
log "finished: $FAILED failed stage(s); files in $OUT: $(ls "$OUT" | tr '\n' ' ')"
exit "$FAILED"
