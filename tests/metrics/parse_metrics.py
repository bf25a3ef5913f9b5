#!/usr/bin/python3
"""Parses a Prometheus text exposition with the reference parser (Debian's
python3-prometheus-client) and writes what it found as JSON, for metrics_http_test.

    parse_metrics.py IN.txt OUT.json

OUT.json: {"families": {name: type}, "samples": [[name, {label: value}, value], ...]}.
A parse error exits 1 with the parser's message on stderr (and no OUT.json)."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    families = {}
    samples = []
    for family in text_string_to_metric_families(text):
        families[family.name] = family.type
        for s in family.samples:
            samples.append([s.name, dict(s.labels), s.value])
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump({"families": families, "samples": samples}, f)


if __name__ == "__main__":
    main()
