"""How far a schemathesis run got: per operation of the served document, the statuses it answered.

    python3 scripts/fuzz-coverage.py <openapi.json URL or file> <events.ndjson>...

Prints how many operations answered something other than 401 and 404 (reached: the fuzzer got past
authentication and found the resource), how many answered a 2xx, and the operations never reached.
"""
import json
import sys
import urllib.request
from collections import defaultdict


def load_document(location):
    if location.startswith("http://") or location.startswith("https://"):
        with urllib.request.urlopen(location) as response:
            return json.load(response)
    with open(location) as f:
        return json.load(f)


def main():
    document = load_document(sys.argv[1])
    operations = [f"{method.upper()} {path}" for path, methods in document["paths"].items() for method in methods]
    statuses = defaultdict(set)
    for events in sys.argv[2:]:
        with open(events) as f:
            for line in f:
                event = json.loads(line)
                finished = event.get("ScenarioFinished")
                if not finished:
                    continue
                recorder = finished.get("recorder") or {}
                cases = recorder.get("cases") or {}
                for case_id, interaction in (recorder.get("interactions") or {}).items():
                    response = interaction.get("response")
                    case = (cases.get(case_id) or {}).get("value") or {}
                    if not response or not case:
                        continue
                    statuses[f"{case['method'].upper()} {case['path']}"].add(response["status_code"])
    reached = [op for op in operations if statuses[op] - {401, 404}]
    succeeded = [op for op in operations if any(200 <= s < 300 for s in statuses[op])]
    called = [op for op in operations if statuses[op]]
    print(f"fuzz coverage: {len(reached)} of {len(operations)} operations reached beyond 401/404; "
          f"{len(succeeded)} answered a 2xx; {len(called)} called at all")
    missing = [op for op in operations if op not in reached]
    if missing:
        print("fuzz coverage: not reached beyond 401/404:")
        for op in missing:
            seen = ",".join(str(s) for s in sorted(statuses[op])) or "never called"
            print(f"  {op}  ({seen})")


if __name__ == "__main__":
    main()
