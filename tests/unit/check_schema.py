#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""docs/events.schema.json against docs/events.md: every example record (a
wrapped line joined again, as tests/unit/test_event_line.c reads them, which
checks that the formatter writes each) validates, and records that break the
schema do not: the schema says something. Real records are validated by
tests/integration/bwtest.py as every suite reads its logs."""
import copy
import json
import os
import sys

import jsonschema

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs")


def examples():
    out, in_json = [], False
    with open(os.path.join(DOCS, "events.md"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("```"):
                in_json = not in_json and line == "```json"
                continue
            if not in_json or not line:
                continue
            if line.startswith(" ") and out:
                out[-1] += line[1:]
            else:
                out.append(line)
    return [json.loads(l) for l in out]


def main():
    with open(os.path.join(DOCS, "events.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    recs = examples()
    bad = 0
    for r in recs:
        for e in v.iter_errors(r):
            print("docs/events.md example %s: %s" % (r.get("ts"), e.message))
            bad += 1
    deny = next(r for r in recs if r["type"] == "deny")
    broken = []
    for field in ("node", "rule", "proc", "parent"):
        r = copy.deepcopy(deny)
        del r[field]
        broken.append(("without " + field, r))
    for field, value in (("ts", "yesterday"), ("rule_id", "12"), ("path_b64", "no!"),
                         ("mode", "fast"), ("port", 70000)):
        r = copy.deepcopy(deny)
        r[field] = value
        broken.append(("%s=%r" % (field, value), r))
    for what, r in broken:
        if v.is_valid(r):
            print("the schema accepts a deny record %s" % what)
            bad += 1
    print("events schema: %d examples, %d broken records refused, %d problems"
          % (len(recs), len(broken), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
