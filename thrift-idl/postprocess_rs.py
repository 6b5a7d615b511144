#!/usr/bin/env python3
"""Post-process the Rust code the Thrift 0.17 compiler generates from one of our IDLs.

Usage: postprocess_rs.py <idl.thrift> <generated.rs>   (rewrites the .rs file in place)

The steps, in order, each for a reason the raw generator output cannot meet:

1. publish_args_results: the generator keeps every `Cassandra<Method>Args` / `Cassandra<Method>Result`
   struct private, with private fields and private `read_from_in_protocol` / `write_to_out_protocol`.
   An asynchronous dispatcher (and a client that encodes calls itself) needs them, so they become
   `pub`. Nothing else of the generated API changes (`ok_or` stays private).
2. apply_wire_type_rule: a generated reader that meets a known field id decodes it as the declared
   type whatever wire type the sender wrote, so a field of another type (e.g. a 0.6 client's call
   read with the 20.1.0 argument struct) desynchronises the stream. Thrift's rule, as the Java and
   C++ generators implement it, is to skip such a field as if its id were unknown. Each match arm
   `N => {` of a reader becomes `N if field_ident.field_type == TType::X => {`, X being the type the
   same struct's writer uses for id N; the existing `_ =>` arm skips everything else.
3. apply_arg_defaults: the generator treats every method argument as required and ignores its IDL
   default. Cassandra's (Java) server reads arguments into a struct pre-filled with the defaults, so
   a client may leave out e.g. `consistency_level`. The collecting local of each defaulted argument
   starts as `Some(default)` instead of `None`. As in Java, a default of a primitive type (i32, i64,
   bool, double) on a `required` argument is *not* applied: Java checks such fields for presence on
   the wire. Only enum (`Enum.MEMBER`), string (`"..."`) and integer defaults are understood.
4. cap_list_reservation: the generated readers reserve a list's declared size before reading any
   element; a client could declare 2^31 elements in a tiny message. The up-front reservation is
   capped (the Vec still grows as elements arrive).
5. unnamed_identifiers: the generated writers build every struct and field identifier with its
   name as a fresh `String` (`TFieldIdentifier::new("name", ...)`), which the binary and compact
   protocols never write: a one-column get_slice reply allocated eight strings, a one-column
   batch_mutate call about twenty, on the server and in every client built on this crate. The
   identifiers are written as literals without the name. Runs after step 2, which reads the
   writers' field types from the named form.

Every step checks the shape it expects (counts, names, types) and exits with a message naming what
it did not find, instead of silently leaving code unpatched. Applying the script twice fails.
"""

import re
import sys
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

PRIMITIVES = {"bool", "byte", "i8", "i16", "i32", "i64", "double"}


def fail(message: str) -> None:
    sys.exit(f"postprocess_rs: {message}")


# ---------------------------------------------------------------------------------------------
# The IDL: the service's methods and their arguments
# ---------------------------------------------------------------------------------------------


@dataclass
class Arg:
    field_id: int
    requiredness: Optional[str]  # "required", "optional" or None (default requiredness)
    type_name: str  # whitespace removed, e.g. "map<string,list<Mutation>>"
    name: str
    default: Optional[str]  # the IDL text after '=', stripped


@dataclass
class Method:
    name: str
    args: List[Arg]


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*|#[^\n]*", "", text)


def split_top_level(text: str) -> List[str]:
    """Split on commas that are not inside <...> or a string literal."""
    parts, depth, quoted, current = [], 0, False, []
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "<":
            depth += 1
        elif not quoted and ch == ">":
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


ARG_RE = re.compile(r"^(\d+)\s*:\s*(?:(required|optional)\s+)?(.+?)\s+(\w+)\s*(?:=\s*(.+))?$", re.S)


def service_methods(idl: str) -> Tuple[str, List[Method]]:
    body = strip_comments(idl)
    services = re.findall(r"\bservice\s+(\w+)\s*\{(.*)\}", body, flags=re.S)
    if len(services) != 1:
        fail(f"expected exactly one service in the IDL, found {len(services)}")
    service, text = services[0]
    if re.search(r"\boneway\b", text) or re.search(r"\bextends\b", body):
        fail("oneway methods and service inheritance are not handled by this script")
    methods = []
    for name, args in re.findall(r"(\w+)\s*\(([^()]*)\)", text):
        if name == "throws":
            continue
        parsed = []
        for part in split_top_level(args):
            m = ARG_RE.match(part)
            if m is None:
                fail(f"{name}: cannot parse argument `{part}`")
            field_id, req, type_name, arg_name, default = m.groups()
            parsed.append(Arg(int(field_id), req, re.sub(r"\s+", "", type_name), arg_name, default and default.strip()))
        methods.append(Method(name, parsed))
    if not methods:
        fail(f"service {service} has no methods")
    return service, methods


def camel(method: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in method.split("_"))


# ---------------------------------------------------------------------------------------------
# The generated Rust: top-level blocks
# ---------------------------------------------------------------------------------------------


def block_span(rs: str, header: str) -> Tuple[int, int]:
    """Start and end (just past the closing `}` line) of the one top-level block opened by `header`."""
    needle = f"\n{header}\n"
    start = rs.find(needle)
    if start < 0 or rs.find(needle, start + 1) >= 0:
        fail(f"expected exactly one `{header}` block")
    end = rs.find("\n}\n", start)
    if end < 0:
        fail(f"`{header}` block is not closed")
    return start + 1, end + 3


def replace_once(block: str, old: str, new: str, where: str) -> str:
    if block.count(old) != 1:
        fail(f"expected exactly one `{old.strip()}` in {where}, found {block.count(old)}")
    return block.replace(old, new)


# ---------------------------------------------------------------------------------------------
# Step 1: public argument and result structs
# ---------------------------------------------------------------------------------------------

FIELD_LINE_RE = re.compile(r"^  (\w+): (.+),$")


def publish_struct(rs: str, name: str, doc: str, default: bool = False) -> str:
    """Makes `struct name` public; with `default`, it also derives Default (every field must be an
    Option), so that a server can fill in just the field its outcome needs."""
    derive = "#[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]\n"
    start, end = block_span(rs, f"struct {name} {{")
    if not rs[:start].endswith(derive):
        fail(f"`struct {name}` is not preceded by the expected derive line")
    lines = rs[start:end].rstrip("\n").split("\n")
    fields = []
    for line in lines[1:-1]:
        m = FIELD_LINE_RE.match(line)
        if m is None:
            fail(f"unexpected line in `struct {name}`: {line!r}")
        if default and not m.group(2).startswith("Option<"):
            fail(f"`struct {name}` field {m.group(1)} is not an Option: cannot derive Default")
        fields.append(f"  pub {m.group(1)}: {m.group(2)},")
    struct = "\n".join([f"pub struct {name} {{", *fields, "}"]) + "\n"
    new_derive = derive.replace("PartialOrd)]", "PartialOrd, Default)]") if default else derive
    rs = rs[: start - len(derive)] + f"/// {doc}\n" + new_derive + struct + rs[end:]

    start, end = block_span(rs, f"impl {name} {{")
    block = rs[start:end]
    for fn in ("read_from_in_protocol", "write_to_out_protocol"):
        block = replace_once(block, f"\n  fn {fn}(", f"\n  pub fn {fn}(", f"`impl {name}`")
    return rs[:start] + block + rs[end:]


def publish_args_results(rs: str, service: str, methods: List[Method]) -> Tuple[str, int]:
    expected = set()
    for method in methods:
        args, result = f"{service}{camel(method.name)}Args", f"{service}{camel(method.name)}Result"
        expected |= {args, result}
        rs = publish_struct(rs, args, f"Arguments of `{method.name}` as they travel in its CALL message.")
        rs = publish_struct(
            rs, result, f"Result of `{method.name}`: field 0 is the return value, the others its exceptions.", True
        )
    left = set(re.findall(r"^struct (\w+) \{", rs, flags=re.M))
    if left:
        fail(f"private structs the IDL's methods do not account for: {sorted(left)}")
    published = set(re.findall(rf"^pub struct ({service}\w+(?:Args|Result)) \{{", rs, flags=re.M))
    if published != expected:
        fail(f"Args/Result structs differ from the IDL's methods: {sorted(published ^ expected)}")
    return rs, len(expected)


# ---------------------------------------------------------------------------------------------
# Step 2: Thrift's wire-type rule in every reader
# ---------------------------------------------------------------------------------------------

WRITER_FIELD_RE = re.compile(r'TFieldIdentifier::new\("\w+", TType::(\w+), (-?\d+)\)')
ARM_RE = re.compile(r"^        (-?\d+) => \{$", re.M)
GUARDED_ARM = "if field_ident.field_type == TType::"


def guard_reader(block: str, where: str) -> Tuple[str, int]:
    types: Dict[int, str] = {}
    for ttype, field_id in WRITER_FIELD_RE.findall(block):
        if types.setdefault(int(field_id), ttype) != ttype:
            fail(f"{where}: the writer uses two wire types for field {field_id}")
    reader_at = block.find("fn read_from_in_protocol(")
    writer_at = block.find("fn write_to_out_protocol(")
    match_at = block.find("      match field_id {\n", reader_at)
    default_at = block.find("\n        _ => {\n          i_prot.skip(field_ident.field_type)?;", match_at)
    if min(reader_at, writer_at, match_at, default_at) < 0 or not reader_at < match_at < default_at:
        fail(f"{where}: reader does not have the expected `match field_id {{ .. _ => skip }}` shape")
    if writer_at < default_at:
        fail(f"{where}: expected the writer after the reader")
    arms = block[match_at:default_at]
    if GUARDED_ARM in arms:
        fail(f"{where}: the wire-type rule is already applied (run the script on fresh output only)")
    ids = [int(i) for i in ARM_RE.findall(arms)]
    if sorted(ids) != sorted(types):
        fail(f"{where}: reader arms {sorted(ids)} differ from writer fields {sorted(types)}")
    guarded = ARM_RE.sub(lambda m: f"        {m.group(1)} {GUARDED_ARM}{types[int(m.group(1))]} => {{", arms)
    return block[:match_at] + guarded + block[default_at:], len(ids)


def apply_wire_type_rule(rs: str) -> Tuple[str, int, int]:
    out, pos, readers, arms = [], 0, 0, 0
    for m in re.finditer(r"^impl (?:TSerializable for )?(\w+) \{\n", rs, flags=re.M):
        end = rs.find("\n}\n", m.start())
        if end < 0:
            fail(f"`impl {m.group(1)}` is not closed")
        block = rs[m.start() : end + 3]
        if "match field_id {" not in block:
            continue
        guarded, count = guard_reader(block, f"`impl {m.group(1)}`")
        out.append(rs[pos : m.start()] + guarded)
        pos = end + 3
        readers += 1
        arms += count
    out.append(rs[pos:])
    rs = "".join(out)
    total = rs.count("match field_id {")
    if readers != total:
        fail(f"guarded {readers} readers but the file has {total} `match field_id` blocks")
    unguarded = ARM_RE.findall(rs)
    if unguarded:
        fail(f"{len(unguarded)} reader arms left without a wire-type guard")
    return rs, readers, arms


# ---------------------------------------------------------------------------------------------
# Step 3: IDL defaults of method arguments
# ---------------------------------------------------------------------------------------------


def rust_default(method: Method, arg: Arg) -> Optional[Tuple[str, str]]:
    """(Rust type of the collecting local, Rust expression of the default), or None to leave it."""
    where = f"{method.name} arg {arg.field_id}"
    default = arg.default
    if default is None:
        return None
    enum = re.fullmatch(r"(\w+)\.(\w+)", default)
    if enum:
        if enum.group(1) != arg.type_name:
            fail(f"{where}: default {default} for type {arg.type_name}")
        return arg.type_name, f"{arg.type_name}::{enum.group(2)}"
    if re.fullmatch(r'"[^"\\]*"', default):
        if arg.type_name != "string":
            fail(f"{where}: string default for type {arg.type_name}")
        return "String", f"{default}.to_owned()"
    if re.fullmatch(r"-?\d+", default) and arg.type_name in ("i16", "i32", "i64"):
        if arg.requiredness == "required":
            return None  # Java checks required primitives for presence on the wire: no default
        return arg.type_name, default
    fail(f"{where}: unsupported argument default `{default}` for type {arg.type_name}")
    return None


def apply_arg_defaults(rs: str, service: str, methods: List[Method]) -> Tuple[str, int, int]:
    applied = left_required = 0
    for method in methods:
        struct = f"{service}{camel(method.name)}Args"
        for arg in method.args:
            found = rust_default(method, arg)
            if found is None:
                left_required += arg.default is not None
                continue
            rust_type, value = found
            start, end = block_span(rs, f"impl {struct} {{")
            old = f"let mut f_{arg.field_id}: Option<{rust_type}> = None;"
            new = f"let mut f_{arg.field_id}: Option<{rust_type}> = Some({value}); // IDL default (postprocess_rs.py)"
            rs = rs[:start] + replace_once(rs[start:end], old, new, f"`impl {struct}`") + rs[end:]
            applied += 1
    return rs, applied, left_required


# ---------------------------------------------------------------------------------------------
# Step 4: bounded up-front reservation of lists
# ---------------------------------------------------------------------------------------------


def cap_list_reservation(rs: str) -> Tuple[str, int]:
    old = "Vec::with_capacity(list_ident.size as usize)"
    count = rs.count(old)
    rs = rs.replace(old, "Vec::with_capacity((list_ident.size as usize).min(1024))")
    if "with_capacity" in rs.replace("Vec::with_capacity((list_ident.size as usize).min(1024))", ""):
        fail("a `with_capacity` call of an unexpected shape is left uncapped")
    return rs, count


def unnamed_identifiers(rs: str) -> Tuple[str, int, int]:
    field = re.compile(r'TFieldIdentifier::new\("\w+", (TType::\w+), (-?\d+)\)')
    rs, fields = field.subn(r"TFieldIdentifier { name: None, field_type: \1, id: Some(\2) }", rs)
    struct = re.compile(r'TStructIdentifier::new\("\w+"\)')
    rs, structs = struct.subn("TStructIdentifier { name: String::new() }", rs)
    for left in ("TFieldIdentifier::new(", "TStructIdentifier::new("):
        if left in rs:
            fail(f"a `{left}...)` of an unexpected shape is left with its allocated name")
    if fields == 0 or structs == 0:
        fail("no struct or field identifiers found to unname")
    return rs, fields, structs


# ---------------------------------------------------------------------------------------------
# Step 6: readers and writers generic over the protocol
# ---------------------------------------------------------------------------------------------
# The generated readers and writers take `&mut dyn TInputProtocol` / `&mut dyn TOutputProtocol`,
# so every field costs a virtual call the compiler cannot see through. Each body becomes an
# inherent function generic over `P: TInputProtocol + ?Sized` (resp. `TOutputProtocol`) under
# the same name, and the `TSerializable` impl delegates to it. Inherent associated functions win
# over trait ones in path and method resolution, so every existing call, in generated code and
# ours (`X::read_from_in_protocol(p)`, `x.write_to_out_protocol(p)`), now takes the generic one:
# with a concrete protocol the whole decode inlines; with a `dyn` one it behaves as before.

DYN_READ = "fn read_from_in_protocol(i_prot: &mut dyn TInputProtocol)"
DYN_WRITE = "fn write_to_out_protocol(&self, o_prot: &mut dyn TOutputProtocol)"
GENERIC_READ = "pub fn read_from_in_protocol<P: TInputProtocol + ?Sized>(i_prot: &mut P)"
GENERIC_WRITE = "pub fn write_to_out_protocol<P: TOutputProtocol + ?Sized>(&self, o_prot: &mut P)"


def generic_protocols(rs: str) -> Tuple[str, int, int]:
    # Inherent readers and writers (the service's argument and result structs): generic in place.
    inherent = rs.count("pub " + DYN_READ) + rs.count("pub " + DYN_WRITE)
    rs = rs.replace("pub " + DYN_READ, GENERIC_READ).replace("pub " + DYN_WRITE, GENERIC_WRITE)
    # `impl TSerializable for X` blocks: the bodies move to `impl X`, the trait impl delegates.
    header = re.compile(r"^impl TSerializable for (\w+) \{$", re.M)
    out, pos, moved = [], 0, 0
    for m in header.finditer(rs):
        name = m.group(1)
        end = rs.find("\n}\n", m.start())
        if end < 0:
            fail(f"`impl TSerializable for {name}` is not closed")
        body = rs[m.end() : end + 1]
        if body.count(DYN_READ) != 1 or body.count(DYN_WRITE) != 1:
            fail(f"`impl TSerializable for {name}` does not hold exactly one reader and one writer")
        allow = "  #[allow(clippy::trivially_copy_pass_by_ref)]\n" if "trivially_copy_pass_by_ref" in body else ""
        generic = body.replace(DYN_READ, GENERIC_READ).replace(DYN_WRITE, GENERIC_WRITE)
        delegate = (
            f"impl TSerializable for {name} {{\n"
            f"  {DYN_READ} -> thrift::Result<{name}> {{\n"
            f"    {name}::read_from_in_protocol(i_prot)\n"
            f"  }}\n"
            f"{allow}"
            f"  {DYN_WRITE} -> thrift::Result<()> {{\n"
            f"    {name}::write_to_out_protocol(self, o_prot)\n"
            f"  }}\n"
            f"}}\n"
        )
        out.append(rs[pos : m.start()])
        out.append(f"impl {name} {{{generic}}}\n\n{delegate}")
        pos = end + 3
        moved += 1
    out.append(rs[pos:])
    rs = "".join(out)
    if moved == 0 or inherent == 0:
        fail("no readers or writers found to make generic")
    return rs, moved, inherent


def main() -> None:
    if len(sys.argv) != 3:
        fail("usage: postprocess_rs.py <idl.thrift> <generated.rs>")
    idl_path, rs_path = sys.argv[1], sys.argv[2]
    with open(idl_path, encoding="utf-8") as f:
        service, methods = service_methods(f.read())
    with open(rs_path, encoding="utf-8") as f:
        rs = f.read()

    rs, structs = publish_args_results(rs, service, methods)
    rs, readers, arms = apply_wire_type_rule(rs)
    rs, defaults, left_required = apply_arg_defaults(rs, service, methods)
    rs, lists = cap_list_reservation(rs)
    rs, fields, structs = unnamed_identifiers(rs)
    rs, serializable, inherent = generic_protocols(rs)

    with open(rs_path, "w", encoding="utf-8") as f:
        f.write(rs)
    print(
        f"postprocess_rs: {idl_path}: {structs} Args/Result structs made public; wire-type rule in "
        f"{readers} readers ({arms} fields); {defaults} argument defaults applied "
        f"({left_required} on required primitives left out, as Java does); {lists} list reservations capped; "
        f"{fields} field and {structs} struct identifiers written without their names; "
        f"{serializable} TSerializable impls and {inherent} argument/result readers and writers made generic"
    )


if __name__ == "__main__":
    main()
