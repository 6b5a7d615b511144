#!/usr/bin/env python3
"""Make the generated Rust argument readers honour IDL defaults of method arguments.

Why: the Thrift 0.17 Rust generator treats every method argument as required and ignores its
default, so a call that leaves out e.g. `get_slice.consistency_level` fails to decode. Cassandra's
own (Java) server pre-fills such arguments with their default (ConsistencyLevel.ONE, SERIAL, ...)
and accepts the call. This script restores that behaviour: in each `Cassandra<Method>Args` reader,
the local that collects an argument with a default starts as `Some(default)` instead of `None`.

Only enum-typed arguments with an `Enum.MEMBER` default exist in the 20.1.0 IDL; any other kind of
argument default makes the script fail loudly rather than be silently skipped.

Usage: apply_arg_defaults.py <cassandra.thrift> <generated cassandra.rs>   (rewrites the .rs file)
"""

import re
import sys


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*|#[^\n]*", "", text)


def arg_defaults(idl: str):
    """Yield (method, field_id, enum_type, member) for every argument that has a default."""
    body = strip_comments(idl)
    service = re.search(r"\bservice\s+Cassandra\s*\{(.*)\}", body, flags=re.S)
    if service is None:
        sys.exit("apply_arg_defaults: no `service Cassandra` in the IDL")
    for method, args in re.findall(r"(\w+)\s*\(([^()]*)\)", service.group(1)):
        if method == "throws":
            continue
        found = re.findall(
            r"(\d+)\s*:\s*(?:(?:required|optional)\s+)?(\w+)\s+\w+\s*=\s*(\w+)\.(\w+)", args
        )
        if len(found) != args.count("="):
            sys.exit(f"apply_arg_defaults: {method}: an argument default is not of the form Enum.MEMBER")
        for field_id, arg_type, enum_type, member in found:
            if arg_type != enum_type:
                sys.exit(f"apply_arg_defaults: {method} arg {field_id}: default {enum_type} for type {arg_type}")
            yield method, int(field_id), enum_type, member


def args_struct_name(method: str) -> str:
    return "Cassandra" + "".join(part[:1].upper() + part[1:] for part in method.split("_")) + "Args"


def main() -> None:
    idl_path, rs_path = sys.argv[1], sys.argv[2]
    with open(idl_path, encoding="utf-8") as f:
        idl = f.read()
    with open(rs_path, encoding="utf-8") as f:
        rs = f.read()

    patched = 0
    for method, field_id, enum_type, member in arg_defaults(idl):
        struct = args_struct_name(method)
        start = rs.find(f"\nimpl {struct} {{\n")
        if start < 0:
            sys.exit(f"apply_arg_defaults: `impl {struct}` not found in {rs_path}")
        end = rs.find("\n}\n", start)
        block = rs[start:end]
        old = f"let mut f_{field_id}: Option<{enum_type}> = None;"
        new = f"let mut f_{field_id}: Option<{enum_type}> = Some({enum_type}::{member}); // IDL default (apply_arg_defaults.py)"
        if block.count(old) != 1:
            sys.exit(f"apply_arg_defaults: expected exactly one `{old}` in `impl {struct}`")
        rs = rs[:start] + block.replace(old, new) + rs[end:]
        patched += 1

    with open(rs_path, "w", encoding="utf-8") as f:
        f.write(rs)
    print(f"apply_arg_defaults: {patched} argument defaults applied in {rs_path}")


if __name__ == "__main__":
    main()
