#!/usr/bin/env bash
# One call on a lent GPU machine (the `device` tool; see docs/cuda.md): install the three
# distributions from wheels built beforehand, record the environment, then run the steps named
# on the command line (default: all), each under its own time limit, logging to $OUT.
#
#   here:   pip wheel --no-deps --no-build-isolation -w .whl . ./plugins/cuda ./plugins/mpi \
#               ./plugins/compat
#           (not ./plugins/nn_ops: it carries a C extension, so its wheel is for one Python; this
#           script builds it there, for that machine's Python, from the working tree)
#           pip download --no-deps --only-binary=:all: --python-version 3.12 ... -d .whl \
#               importlib-metadata lazy-importer mpich "setuptools>=77"   # (see the device
#               tool's README; importlib-metadata 10 needs lazy-importer on Python < 3.15)
#           cp -r ../shared/bench/peers .peers        # the peer harness does not travel
#   there:  bash benchmarks/gpu_session.sh [env] [tests] [compat] [index] [capture] [compare] [static] [harness]
#           [nccl] [suite]   (carrying .whl and .peers)
#
# Steps: env (nvidia-smi, CuPy's configuration, `gradhub plugins`), tests
# (tests/cuda and the op matrix on cuda; TESTS_LIMIT, MATRIX_LIMIT seconds, NPROC workers), compat
# (the front-ends on cuda against the CPU: tests/compat/*/test_cuda.py and the static captures), index
# (benchmarks/index_width_gpu.py: 32- against 64-bit index kernels), capture (tests/cuda/test_capture.py: CUDA
# graphs of compiled steps, with the report of which sample steps were recorded), compare
# (benchmarks/gpu_compare.py at batch 256, with a cProfile of gradhub's steps), static (the same
# with gradhub's steps through gh.compile, with the kernels per step), harness
# (benchmarks/run.py --device cuda: W2-W5 at the harness's sizes), nccl (tests/mpi/test_nccl.py),
# suite (the whole test suite, which also checks the machine's Python and numpy).
set -u
OUT=${OUT:-/tmp/gpu_out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=${PY:-python3}
steps=${*:-env tests compare harness suite}

# the carried wheels first (a setuptools >= 77 among them, which the builds need), then
# gradhub-nn-ops' wheel, built on this machine with it (its C extension for this Python and CPU;
# the install goes on without the extension where no C compiler is: its numpy kernels serve)
rm -f .whl/gradhub_nn_ops-*.whl
$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site
$PY -m pip wheel -q --no-deps --no-build-isolation --no-index -w /tmp/nnw ./plugins/nn_ops || exit 1
$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site /tmp/nnw/*.whl || exit 1
# pip --target leaves out the mpich wheel's data (mpiexec, libmpi): unpacked beside it
if ls .whl/mpich-*.whl >/dev/null 2>&1; then
    $PY -m zipfile -e .whl/mpich-*.whl /tmp/mpich >/dev/null
    MPICH=$(echo /tmp/mpich/mpich-*.data/data)
    chmod +x "$MPICH"/bin/*
    export PATH=$MPICH/bin:$PATH
    export LD_LIBRARY_PATH=$MPICH/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
export MPI4PY_MPIABI=mpich  # mpi4py would otherwise pick another MPI library found on the machine

for step in $steps; do
    echo "=== $step ($(date +%T))"
    case $step in
    env)
        { nvidia-smi; $PY -c "import cupy; cupy.show_config()"
          $PY -c "from gradhub.cli import main; main(['plugins'])"; } >"$OUT/env.txt" 2>&1
        head -20 "$OUT/env.txt" ;;
    tests)
        { GRADHUB_CAPTURE_REPORT="$OUT/capture_report.txt" timeout "${TESTS_LIMIT:-200}" \
              $PY -m pytest -q -p no:cacheprovider -p no:benchmark -rfEs --timeout 120 \
              --durations 10 -n "${NPROC:-4}" tests/cuda
          timeout "${MATRIX_LIMIT:-300}" $PY -m pytest -q -p no:cacheprovider -rfEs --timeout 120 \
              --durations 10 -p no:benchmark -n "${NPROC:-4}" tests/contracts/test_op_matrix.py \
              -k cuda; } 2>&1 | tee "$OUT/tests.txt" | grep -v "^SKIPPED" | tail -40 ;;
    compat)
        timeout "${COMPAT_LIMIT:-150}" $PY -m pytest -q -p no:cacheprovider -p no:benchmark -rfEs \
            --timeout 100 --durations 10 -n "${NPROC:-4}" tests/compat/nnabla/test_cuda.py \
            tests/compat/chainer/test_cuda.py tests/compat/mxnet/test_cuda.py \
            tests/compat/nnabla/test_static_capture.py tests/compat/chainer/test_link.py 2>&1 \
            | tee "$OUT/compat.txt" | grep -v "^SKIPPED" | tail -40 ;;
    index)
        timeout 120 $PY benchmarks/index_width_gpu.py 2>&1 | tee "$OUT/index_width.txt" ;;
    capture)
        GRADHUB_CAPTURE_REPORT="$OUT/capture_report.txt" timeout 300 $PY -m pytest -q \
            -p no:cacheprovider -rfEs --timeout 240 --durations 10 tests/cuda/test_capture.py 2>&1 \
            | tee "$OUT/capture.txt" | tail -40 ;;
    static)
        timeout 240 $PY benchmarks/gpu_compare.py --peers .peers --batch "${BATCH:-256}" \
            --variant static --profile "$OUT/profile_static.txt" ${STATIC_ARGS:-} 2>&1 \
            | tee "$OUT/static.txt" ;;
    nccl)
        timeout 120 $PY -m pytest -q -p no:cacheprovider -rfEs --timeout 100 tests/mpi/test_nccl.py \
            tests/compat/chainermn \
            2>&1 | tee "$OUT/nccl.txt" | tail -30 ;;
    compare)
        timeout 240 $PY benchmarks/gpu_compare.py --peers .peers --batch "${BATCH:-256}" \
            --profile "$OUT/profile.txt" ${COMPARE_ARGS:-} 2>&1 | tee "$OUT/compare.txt" ;;
    harness)
        timeout 300 $PY benchmarks/run.py --device cuda --peers .peers --python "$(command -v $PY)" \
            --rounds "${ROUNDS:-1}" --out "$OUT/harness.json" --markdown "$OUT/harness.md" \
            2>&1 | tail -30 ;;
    suite)
        timeout 240 $PY -m pytest -q -p no:cacheprovider -p no:benchmark -n 8 2>&1 | tee "$OUT/suite.txt" \
            | tail -15 ;;
    *)
        echo "unknown step $step" ;;
    esac
done
echo "=== done ($(date +%T))"
