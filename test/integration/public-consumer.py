"""A consumer of the public integration events that we did not write in TypeScript (issue 32).

Reads every message of the given topics from the beginning to their end with confluent-kafka
(librdkafka), and checks each one against the AsyncAPI document: the CloudEvents binary-mode
headers, and the data against the JSON Schema its ce_type names (jsonschema, Draft 7).
Prints a JSON report: messages read, per topic the (type, subject, tenant, id) of each, and errors.
"""
import json
import sys
import uuid

import jsonschema
from confluent_kafka import Consumer, KafkaError, TopicPartition

brokers, asyncapi_file, *topics = sys.argv[1:]
with open(asyncapi_file, encoding="utf-8") as f:
    doc = json.load(f)
schemas = doc["components"]["schemas"]
messages = doc["components"]["messages"]
REQUIRED = ["ce_specversion", "ce_id", "ce_type", "ce_source", "ce_subject", "ce_time", "ce_dataschema", "ce_flowsvctenant", "content-type"]

consumer = Consumer({
    "bootstrap.servers": brokers,
    "group.id": f"public-consumer-check-{uuid.uuid4()}",
    "enable.auto.commit": False,
    "enable.partition.eof": True,
    "auto.offset.reset": "earliest",
})
assignments = []
for topic in topics:
    metadata = consumer.list_topics(topic, timeout=10)
    for partition in metadata.topics[topic].partitions:
        assignments.append(TopicPartition(topic, partition, 0))
consumer.assign(assignments)
pending = {(a.topic, a.partition) for a in assignments}
report = {"read": 0, "topics": {t: [] for t in topics}, "errors": []}
while pending:
    msg = consumer.poll(10)
    if msg is None:
        report["errors"].append(f"no message nor end within 10 s; still waiting for {sorted(pending)}")
        break
    if msg.error():
        if msg.error().code() == KafkaError._PARTITION_EOF:
            pending.discard((msg.topic(), msg.partition()))
            continue
        report["errors"].append(str(msg.error()))
        break
    report["read"] += 1
    headers = {k: (v.decode("utf-8") if v is not None else None) for k, v in (msg.headers() or [])}
    where = f"{msg.topic()}@{msg.partition()}:{msg.offset()}"
    missing = [h for h in REQUIRED if h not in headers]
    if missing:
        report["errors"].append(f"{where}: headers missing {missing}")
        continue
    ce_type = headers["ce_type"]
    if ce_type not in schemas:
        report["errors"].append(f"{where}: unknown ce_type {ce_type}")
        continue
    try:
        jsonschema.validate(headers, messages[ce_type]["headers"], cls=jsonschema.Draft7Validator)
        data = json.loads(msg.value().decode("utf-8"))
        jsonschema.validate(data, schemas[ce_type], cls=jsonschema.Draft7Validator)
    except (jsonschema.ValidationError, ValueError) as e:
        report["errors"].append(f"{where}: {ce_type}: {str(e).splitlines()[0]}")
        continue
    if msg.key() is None or msg.key().decode("utf-8") != headers["ce_subject"]:
        report["errors"].append(f"{where}: key is not ce_subject")
    report["topics"][msg.topic()].append({"type": ce_type, "subject": headers["ce_subject"], "tenant": headers["ce_flowsvctenant"], "id": headers["ce_id"]})
consumer.close()
print(json.dumps(report))
