#!/usr/bin/env bash
# Runs the official Python SDK's own test suite and samples, from the azure-cosmos source
# distribution on PyPI (pinned below, downloaded here, never kept in this repository), against the
# cosmos-emulator binary, and compares the outcome with expected_failures.txt.
#
#   - the test files in test_files.txt run with pytest against `--tls --port 8081`: the suite's
#     test_config.py uses the account key only for exactly https://localhost:8081/, so the emulator
#     serves that address with its generated certificate, which Python is told to trust;
#   - the samples in samples.txt run against a second emulator over plain HTTP, their endpoint,
#     key and names passed in the environment variables they read; a sample is clean when it
#     exits 0 and every error line it prints is one sample_expected_output.txt lists (a refusal
#     the sample demonstrates), each listed line printed (sample_judge.py);
#   - check.py fails the run when a test or sample fails that expected_failures.txt does not list,
#     or when a listed one passes (so the list only shrinks). Its last line, the last line printed,
#     is "N passed, N failed, N skipped" of the test suite.
#
# As root with `unshare` and `ip` available, the emulators and the clients run in a network namespace of
# their own (loopback only), so port 8081 cannot clash with anything else on the machine;
# otherwise port 8081 must be free.
#
# Environment: PYTHON (default python3), SUITE_WORK (default /tmp/cosmos-python-suite: venv, sdist,
# logs), CARGO_TARGET_DIR (default <repo>/target), EMULATOR_PROFILE (debug, the default, or
# release), SUITE_TEST_TIMEOUT (seconds a test may take, default 120), SUITE_TIMEOUT (seconds the
# whole test run may take, default 1200), SAMPLE_TIMEOUT (seconds a sample may take, default 120).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
python=${PYTHON:-python3}
work=${SUITE_WORK:-/tmp/cosmos-python-suite}
target=${CARGO_TARGET_DIR:-$root/target}
profile=${EMULATOR_PROFILE:-debug}
sdk_version=4.17.1

if [ "${1:-}" = "--in-namespace" ]; then
    # Second stage: only loopback is needed from here on.
    emulator=$2
    src=$3
    key="C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
    if [ "${4:-}" = netns ]; then
        ip link set lo up
    fi
    emulator_pid=""
    stop_emulator() {
        if [ -n "$emulator_pid" ] && kill -0 "$emulator_pid" 2>/dev/null; then
            kill -INT "$emulator_pid" 2>/dev/null || true
            for _ in $(seq 1 50); do
                kill -0 "$emulator_pid" 2>/dev/null || break
                sleep 0.1
            done
            kill -KILL "$emulator_pid" 2>/dev/null || true
            wait "$emulator_pid" 2>/dev/null || true
        fi
        emulator_pid=""
    }
    trap stop_emulator EXIT
    # start_emulator PORT LOG [FLAG...]: starts it, waits until the port answers.
    start_emulator() {
        local port=$1 log=$2
        shift 2
        "$emulator" --port "$port" --regions "South Central US" "$@" >"$log" 2>&1 &
        emulator_pid=$!
        for _ in $(seq 1 100); do
            kill -0 "$emulator_pid" 2>/dev/null || break
            if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
                return 0
            fi
            sleep 0.1
        done
        echo "the emulator did not come up on port $port; its output:"
        cat "$log"
        exit 1
    }
    if (exec 3<>/dev/tcp/127.0.0.1/8081) 2>/dev/null; then
        echo "port 8081 is in use: the suite needs it (its test_config.py names https://localhost:8081/)"
        exit 1
    fi

    mapfile -t files < <(grep -v '^\s*\(#\|$\)' "$here/test_files.txt")
    echo "test suite: ${#files[@]} files, against https://localhost:8081/"
    rm -f "$work/cert.pem" "$work/results.jsonl" "$work/samples.jsonl"
    start_emulator 8081 "$work/emulator-tls.log" --tls --cert-out "$work/cert.pem"
    # The certificate is written once the listeners are up.
    for _ in $(seq 1 50); do
        [ -s "$work/cert.pem" ] && break
        sleep 0.1
    done
    set +e
    (
        cd "$src/tests"
        export REQUESTS_CA_BUNDLE="$work/cert.pem" SSL_CERT_FILE="$work/cert.pem"
        export PYTHONPATH="$here" SUITE_RESULTS="$work/results.jsonl"
        export PYTHONDONTWRITEBYTECODE=1
        timeout --kill-after=10 "${SUITE_TIMEOUT:-1200}" "$work/venv/bin/python" -m pytest \
            -p no:cacheprovider -p suite_report -p suite_isolation \
            --timeout "${SUITE_TEST_TIMEOUT:-120}" -q -rfE --tb=native -W ignore --durations=10 \
            "${files[@]}"
    ) >"$work/pytest.log" 2>&1
    status=$?
    set -e
    echo "pytest exited with $status (its output: $work/pytest.log)"
    sed -n '/slowest 10 durations/,/^$/p' "$work/pytest.log"
    stop_emulator

    port=8091
    endpoint="http://127.0.0.1:$port/"
    echo "samples: against $endpoint"
    start_emulator "$port" "$work/emulator-http.log"
    rm -rf "$work/samples-run"
    cp -r "$src/samples" "$work/samples-run"
    while read -r sample; do
        case "$sample" in '' | '#'*) continue ;; esac
        name=${sample%.py}
        set +e
        (
            cd "$work/samples-run"
            export ACCOUNT_HOST="$endpoint" ACCOUNT_URI="$endpoint" COSMOS_ACCOUNT_URL="$endpoint"
            export ACCOUNT_KEY="$key" COSMOS_CREDENTIAL="$key"
            export CONN_STR="AccountEndpoint=$endpoint;AccountKey=$key;"
            export COSMOS_DATABASE="sample-$name" DATABASE_NAME="sample-$name-db"
            export COSMOS_CONTAINER="items" COSMOS_CONTAINER_MH="items-mh"
            timeout --kill-after=5 "${SAMPLE_TIMEOUT:-120}" "$work/venv/bin/python" "$sample"
        ) >"$work/sample-$name.log" 2>&1
        code=$?
        set -e
        # Judged by what it printed as well as by its exit status (sample_judge.py says how).
        line=$(python3 "$here/sample_judge.py" --sample "$sample" --code "$code" \
            --log "$work/sample-$name.log" --expected "$here/sample_expected_output.txt")
        printf '%s\n' "$line" >>"$work/samples.jsonl"
        code=$(printf '%s' "$line" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["status"]))')
        if [ "$code" = 0 ]; then
            echo "  $sample: clean"
        else
            case "$code" in '"'*) outcome=${code//\"/} ;; *) outcome="exit status $code" ;; esac
            echo "  $sample: $outcome; the last lines of $work/sample-$name.log:"
            tail -n 3 "$work/sample-$name.log" | sed 's/^/      /'
        fi
    done <"$here/samples.txt"
    stop_emulator
    exit 0
fi

echo "building cosmos-emulator ($profile)"
if [ "$profile" = release ]; then
    (cd "$root" && cargo build -q --release -p cosmos-emulator --bin cosmos-emulator)
else
    (cd "$root" && cargo build -q -p cosmos-emulator --bin cosmos-emulator)
fi
emulator="$target/$profile/cosmos-emulator"

mkdir -p "$work"
if [ ! -x "$work/venv/bin/python" ]; then
    "$python" -m venv "$work/venv"
fi
pip=("$work/venv/bin/pip" --quiet --disable-pip-version-check)
if [ ! -f "$work/dl/azure_cosmos-$sdk_version.tar.gz" ]; then
    "${pip[@]}" download --no-binary :all: --no-deps "azure-cosmos==$sdk_version" -d "$work/dl"
fi
rm -rf "$work/src-unpacked"
mkdir -p "$work/src-unpacked"
tar -xzf "$work/dl/azure_cosmos-$sdk_version.tar.gz" -C "$work/src-unpacked"
src="$work/src-unpacked/azure_cosmos-$sdk_version"
"${pip[@]}" install -r "$here/requirements.txt" "$src"
echo "azure-cosmos $sdk_version from its sdist; $("$work/venv/bin/python" -m pytest --version 2>&1)"

start=$(date +%s)
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null &&
    unshare --net true 2>/dev/null; then
    echo "running in a network namespace of its own"
    unshare --net bash "$0" --in-namespace "$emulator" "$src" netns
else
    bash "$0" --in-namespace "$emulator" "$src"
fi
echo "suite and samples took $(($(date +%s) - start)) s"
"$work/venv/bin/python" "$here/check.py" --results "$work/results.jsonl" \
    --samples "$work/samples.jsonl" --expected "$here/expected_failures.txt"
