"""The JSON objects of a results file, one a line (the benchmark scripts' output); other
lines (a job's own text) are skipped."""
import json


def objects(path):
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                yield json.loads(line)
