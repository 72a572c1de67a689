#!/usr/bin/python3
"""Parses a Prometheus text exposition with the official Python client's parser
(Debian: python3-prometheus-client) and prints it as JSON for metrics_test:
{"families": {name: {"type": t, "help": h, "samples": [[sample_name, {labels}, value], ...]}}}.

A text the parser refuses exits with status 1 and its error on stderr. Exit 77 (CTest's skip
code) when the client library is missing, which says nothing about reflectd.

Usage: parse_exposition.py FILE
"""
import json
import math
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("python3-prometheus-client is not installed (scripts/install-deps.sh)", file=sys.stderr)
    sys.exit(77)


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    families = {}
    try:
        for family in text_string_to_metric_families(text):
            if family.name in families:
                raise ValueError(f"family {family.name} appears twice")
            families[family.name] = {
                "type": family.type,
                "help": family.documentation,
                "samples": [
                    [s.name, s.labels, None if math.isnan(s.value) else
                     ("+Inf" if math.isinf(s.value) else s.value)]
                    for s in family.samples
                ],
            }
    except Exception as error:  # the parser raises ValueError and others on malformed input
        print(f"not a valid exposition: {error}", file=sys.stderr)
        return 1
    json.dump({"families": families}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
