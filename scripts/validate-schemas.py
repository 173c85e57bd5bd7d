#!/usr/bin/env python3
"""Validate site.json files against docs/site.schema.json with a real JSON Schema validator.

Checks, each printed as one line:
  * docs/site.schema.json itself: valid draft 2020-12 (check_schema), every property documented
    (description, markdownDescription, default, examples), and every default and example valid
    against the property's own schema;
  * every site-config/*/site.json and Tests/AASACoreTests/Fixtures/schema/valid/*.json: must pass;
  * every Tests/AASACoreTests/Fixtures/schema/invalid/*.json: must FAIL.

Ends with a line "N passed, M failed" and exits 1 if anything failed (2 if jsonschema is missing).
Run from anywhere: paths are relative to the repository root (this script's parent folder).
Requires: pip install jsonschema (4.18 or later).
"""

import json
import sys
from pathlib import Path

try:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
except ImportError:
    print("error: the Python package 'jsonschema' is not installed; fix: pip install jsonschema", file=sys.stderr)
    sys.exit(2)

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "docs" / "site.schema.json"
FIXTURES = ROOT / "Tests" / "AASACoreTests" / "Fixtures" / "schema"
DOCUMENTATION_KEYS = ("description", "markdownDescription", "default", "examples")


def relative(path):
    return path.relative_to(ROOT).as_posix()


def describe(error):
    """One line: where in the document, and what the validator said."""
    where = error.json_path if error.json_path != "$" else "top level"
    return f"{where}: {error.message}"


def schema_problems(schema):
    """Documentation gaps and defaults/examples the schema itself rejects."""
    problems = []
    count = 0

    def check_property(name, subschema, where):
        nonlocal count
        count += 1
        for key in DOCUMENTATION_KEYS:
            if key not in subschema:
                problems.append(f"{where}: property '{name}' has no '{key}'")
        # Validate defaults and examples against the property's own schema, with $defs in reach.
        own = dict(subschema)
        own["$defs"] = schema.get("$defs", {})
        validator = Draft202012Validator(own)
        values = [("default", subschema["default"])] if "default" in subschema else []
        values += [(f"examples[{i}]", value) for i, value in enumerate(subschema.get("examples", []))]
        for label, value in values:
            error = next(iter(sorted(validator.iter_errors(value), key=lambda e: e.path)), None)
            if error is not None:
                problems.append(f"{where}.{name} {label} is not valid for it: {describe(error)}")

    def walk(node, where):
        if isinstance(node, dict):
            for name, subschema in node.get("properties", {}).items():
                check_property(name, subschema, where)
            for key, value in node.items():
                # if/then/else only constrain properties documented beside them; they declare none.
                if key not in ("if", "then", "else"):
                    walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}[{index}]")

    walk(schema, "$")
    return problems, count


def main():
    passed = 0
    failed = 0

    def report(ok, path, detail):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
        print(f"{'PASS' if ok else 'FAIL'} {path}: {detail}")

    try:
        schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(schema)
    except (OSError, ValueError, SchemaError) as error:
        report(False, relative(SCHEMA), f"not a usable draft 2020-12 schema: {str(error).splitlines()[0]}")
        print(f"{passed} passed, {failed} failed")
        return 1
    problems, count = schema_problems(schema)
    if problems:
        report(False, relative(SCHEMA), "; ".join(problems))
    else:
        report(True, relative(SCHEMA), f"valid draft 2020-12; {count} properties documented with valid defaults and examples")

    validator = Draft202012Validator(schema)
    must_pass = sorted((ROOT / "site-config").glob("*/site.json")) + sorted((FIXTURES / "valid").glob("*.json"))
    must_fail = sorted((FIXTURES / "invalid").glob("*.json"))
    if not must_fail:
        report(False, relative(FIXTURES / "invalid"), "no invalid fixtures found")

    for path, should_pass in [(p, True) for p in must_pass] + [(p, False) for p in must_fail]:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            report(False, relative(path), f"cannot read as JSON: {error}")
            continue
        errors = sorted(validator.iter_errors(document), key=lambda e: (list(e.path), e.message))
        if should_pass:
            link = document.get("$schema") if isinstance(document, dict) else None
            if not errors and isinstance(link, str) and (path.parent / link).resolve() != SCHEMA:
                report(False, relative(path), f'"$schema": "{link}" does not lead to {relative(SCHEMA)}')
                continue
            report(not errors, relative(path), "valid" if not errors else "expected valid, but " + describe(errors[0]))
        else:
            report(bool(errors), relative(path), "rejected as expected: " + describe(errors[0]) if errors else "expected the schema to reject it, but it is valid")

    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
