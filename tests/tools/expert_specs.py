"""expert_specs.py: check the binding specs of the expert implementations
without running them (tests/cli/expert_specs.sh).

Every DKB_BIND_COLS / DKB_BIND_PARAMS / DKB_BIND_RES call in
src/kernels/cpu/qNN.full.c and src/kernels/cuda/qNN.full.cu is parsed: its
spec string (adjacent literals joined) and its pointer arguments. Checks:
  - each call names as many pointers as its spec has entries (the toolkit
    checks this at run time too; here it is caught before any run);
  - a CUDA expert's inputs are columns that a C expert binds with the same
    table and the same kind, or a looser one (any, u8 for dict, i64 for
    decN): the C experts run in CI on every seed, so each such entry is
    known to bind, while a CUDA expert cannot be run without a GPU;
  - every expert's parameters are the query's (names and kinds as `dkb sql
    qNN --params-json` gives them: str for a string) and its result columns
    the baseline's (names; int, float, date, str, dec or decN with N at
    most the column's scale, as `dkb run qNN --format json` declares them).
Usage: expert_specs.py ROOT DECL.json, DECL {"qNN": {"params": {...},
"columns": [...]}}. Prints one line per problem and exits 1 when there is
any."""
import json
import re
import sys
from pathlib import Path

CALL = re.compile(r"DKB_BIND_(COLS|PARAMS|RES)\s*\(")


def calls(text):
    """(kind, [args]) of every bind call, args split at top-level commas."""
    out = []
    for m in CALL.finditer(text):
        depth, i, args, cur = 1, m.end(), [], ""
        in_str = False
        while depth and i < len(text):
            ch = text[i]
            if in_str:
                cur += ch
                if ch == "\\":
                    cur += text[i + 1]
                    i += 1
                elif ch == '"':
                    in_str = False
            elif ch == '"':
                in_str = True
                cur += ch
            elif ch in "([{":
                depth += 1
                cur += ch
            elif ch in ")]}":
                depth -= 1
                if depth:
                    cur += ch
            elif ch == "," and depth == 1:
                args.append(cur.strip())
                cur = ""
            else:
                cur += ch
            i += 1
        args.append(cur.strip())
        out.append((m.group(1), args))
    return out


def literal(arg):
    """The value of an argument made of adjacent string literals, or None."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', arg)
    rest = re.sub(r'"((?:[^"\\]|\\.)*)"', "", arg).strip()
    return "".join(parts) if parts and not rest else None


def specs(path, problems):
    """{"cols": {(table, entry)}, "params": [entries], "res": [entries]}."""
    got = {"cols": set(), "params": [], "res": []}
    for kind, args in calls(path.read_text()):
        where = f"{path}: DKB_BIND_{kind}"
        if kind == "COLS":
            table, spec, ptrs = literal(args[1]) if len(args) > 1 else None, args[2] if len(args) > 2 else "", args[3:]
        else:
            table, spec, ptrs = None, args[1] if len(args) > 1 else "", args[2:]
        text = literal(spec)
        if text is None or (kind == "COLS" and table is None):
            problems.append(f"{where}: the table and spec must be string literals here ({args[:3]})")
            continue
        entries = text.split()
        if len(entries) != len(ptrs):
            problems.append(f"{where}({table or ''} \"{text}\"): {len(entries)} entries but {len(ptrs)} pointers")
        if kind == "COLS":
            got["cols"].update((table, e) for e in entries)
        else:
            got[kind.lower()].extend(entries)
    return got


def looser_or_same(g, c):
    """Column kind g binds wherever kind c does."""
    return g == c or g in ("", "any") or (g == "u8" and c == "dict") or (g == "i64" and re.fullmatch(r"dec\d+", c))


RES_KINDS = {"int": "INT", "float": "FLOAT", "date": "DATE", "str": "STRING"}


def is_string(v):
    """A string parameter (--params-json writes dates as "YYYY-MM-DD" too)."""
    return isinstance(v, str) and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", v)


def check_decl(path, q, s, decl, problems):
    """Parameters and result columns of one expert against the query's."""
    d = decl.get(q)
    if d is None:
        problems.append(f"{path}: no declaration of {q}")
        return 0
    for e in s["params"]:
        name, _, kind = e.partition(":")
        if name not in d["params"]:
            problems.append(f"{path}: parameter \"{e}\": {q} has no parameter {name} ({sorted(d['params'])})")
        elif (kind == "str") != is_string(d["params"][name]) and kind not in ("any",):
            problems.append(f"{path}: parameter \"{e}\": {q}'s {name} is {d['params'][name]!r}")
    cols = {c["name"]: c for c in d["columns"]}
    for e in s["res"]:
        name, _, kind = e.partition(":")
        col = cols.get(name)
        if col is None:
            problems.append(f"{path}: result column \"{e}\": {q}'s result has no column {name} ({list(cols)})")
            continue
        m = re.fullmatch(r"dec(\d*)", kind)
        ok = col["type"] == "DECIMAL" and (not m.group(1) or int(m.group(1)) <= col.get("scale", 0)) if m else \
            RES_KINDS.get(kind) == col["type"]
        if not ok:
            problems.append(f"{path}: result column \"{e}\": {q}'s {name} is {col['type']} scale {col.get('scale')}")
    return len(s["params"]) + len(s["res"])


def main(root, decl_path):
    root = Path(root)
    decl = json.load(open(decl_path))
    problems = []
    cpu = {p.name.split(".")[0]: specs(p, problems) for p in sorted((root / "src/kernels/cpu").glob("q*.full.c"))}
    cuda = {p.name.split(".")[0]: specs(p, problems) for p in sorted((root / "src/kernels/cuda").glob("q*.full.cu"))}
    known = {}
    for s in cpu.values():
        for table, entry in s["cols"]:
            name, _, kind = entry.partition(":")
            known.setdefault((table, name), set()).add(kind)
    checked = 0
    for q, s in cuda.items():
        path = f"src/kernels/cuda/{q}.full.cu"
        for table, entry in sorted(s["cols"]):
            checked += 1
            name, _, kind = entry.partition(":")
            if not any(looser_or_same(kind, k) for k in known.get((table, name), ())):
                problems.append(f"{path}: {table} \"{entry}\" is bound so by no C expert (C experts: "
                                f"{sorted(known.get((table, name), [])) or 'none'}): not known to bind")
    for tree, experts in (("cpu", cpu), ("cuda", cuda)):
        for q, s in experts.items():
            checked += check_decl(f"src/kernels/{tree}/{q}.full.{'c' if tree == 'cpu' else 'cu'}", q, s, decl, problems)
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print(f"ok: {len(cuda)} CUDA and {len(cpu)} C experts, {checked} bound entries checked; "
              f"pointer counts match in all {len(cpu) + len(cuda)} files")
    return 1 if problems or len(cuda) != 22 or len(cpu) != 22 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
