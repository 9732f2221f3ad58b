#!/usr/bin/python3
"""Validate sandrun sandbox receipts against contrib/sandbox/receipt.schema.json.

usage: validate-receipt.py [--audit] [FILE...]

Each FILE (default: stdin) holds one receipt (--receipt) or, with --audit,
one receipt per line (--audit-log: no stdout/stderr bodies). Prints one line
per problem and exits 1 when any receipt is invalid, 2 on a usage error.

Beyond the schema, it checks what a schema cannot say: timestamps parse as
RFC 3339 and do not go backwards, and a full receipt carries the output bodies
while an audit line does not.
"""
import datetime
import json
import os
import sys

import jsonschema

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                      "contrib", "sandbox", "receipt.schema.json")


def rfc3339(value):
    if not isinstance(value, str) or "T" not in value:
        raise ValueError("not an RFC 3339 date-time")
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    stamp = datetime.datetime.fromisoformat(text)
    if stamp.tzinfo is None:
        raise ValueError("no time zone")
    return stamp


def problems(receipt, validator, audit):
    for err in sorted(validator.iter_errors(receipt), key=lambda e: list(e.path)):
        where = "/".join(str(p) for p in err.absolute_path) or "(top)"
        yield f"{where}: {err.message}"
    if not isinstance(receipt, dict):
        return
    stamps = {}
    for key in ("started_at", "finished_at"):
        try:
            stamps[key] = rfc3339(receipt.get(key))
        except (ValueError, TypeError) as exc:
            yield f"{key}: {receipt.get(key)!r}: {exc}"
    if len(stamps) == 2 and stamps["finished_at"] < stamps["started_at"]:
        yield "finished_at is before started_at"
    for i, conn in enumerate(receipt.get("network") or []):
        try:
            rfc3339(conn.get("time"))
        except (ValueError, TypeError, AttributeError) as exc:
            yield f"network/{i}/time: {exc}"
    for key in ("stdout", "stderr"):
        if audit and key in receipt:
            yield f"{key}: an audit-log line must not carry the output bodies"
        if not audit and key not in receipt:
            yield f"{key}: missing from a full receipt"


def main(argv):
    audit = False
    files = []
    for arg in argv:
        if arg == "--audit":
            audit = True
        elif arg.startswith("-") and arg != "-":
            print(f"validate-receipt.py: unknown option {arg}", file=sys.stderr)
            return 2
        else:
            files.append(arg)
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)
    bad = 0
    for name in files or ["-"]:
        text = sys.stdin.read() if name == "-" else open(name, encoding="utf-8").read()
        docs = text.splitlines() if audit else [text]
        if audit and not any(line.strip() for line in docs):
            print(f"{name}: no audit line")
            bad += 1
        for n, doc in enumerate(docs, 1):
            if audit and not doc.strip():
                continue
            label = f"{name}:{n}" if audit else name
            try:
                receipt = json.loads(doc)
            except json.JSONDecodeError as exc:
                print(f"{label}: not JSON: {exc}")
                bad += 1
                continue
            for p in problems(receipt, validator, audit):
                print(f"{label}: {p}")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
