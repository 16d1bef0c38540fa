#!/usr/bin/env bash
# The second-language consumer of the public integration events (issue 32): Python's
# confluent-kafka (librdkafka) and jsonschema from PyPI, in a venv cached under $SERVERS_DIR
# (git-ignored, created once). Usage: .ci/public-consumer.sh <brokers> <asyncapi.json file> <topic>...
# Prints one JSON report on stdout (test/integration/public-consumer.py). `--install`: only prepare the venv.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SERVERS_DIR="${SERVERS_DIR:-$ROOT/.servers}"
VENV="$SERVERS_DIR/integration-consumer/venv"
CONFLUENT_KAFKA_VERSION="${CONFLUENT_KAFKA_VERSION:-2.6.1}"
JSONSCHEMA_VERSION="${JSONSCHEMA_VERSION:-4.23.0}"
if ! "$VENV/bin/python" -c "import confluent_kafka, jsonschema; assert confluent_kafka.__version__ == '$CONFLUENT_KAFKA_VERSION'" 2>/dev/null; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "confluent-kafka==$CONFLUENT_KAFKA_VERSION" "jsonschema==$JSONSCHEMA_VERSION" >&2
fi
[[ ${1:-} != --install ]] || exit 0
exec "$VENV/bin/python" "$ROOT/test/integration/public-consumer.py" "$@"
