"""LP-file writer in Gurobi 12's dialect (see docs/gurobipy-layer.md and OR_BENCHMARKS.md §8).

Layout rules measured on the 738 Gurobi-written reference files:
- two `\\` header lines; `Minimize`/`Maximize`; `Subject To`; `Bounds` (always); `Binaries`/`Generals` when
  non-empty; `End`.
- Rows ` name: t1 + t2 ... <= rhs`; terms are in column order with duplicates summed. A token (term or
  ` <= rhs`) moves to a continuation line (indented, `   + ...`) when the line would exceed 75 characters
  (76 on the objective's first line).
- Numbers: 0 prints `0`; 1e-3 <= |v| < 1e6 prints like C's %.16g; anything else as %.16e with trailing mantissa
  zeros removed (`1e+06`, `4.3894320716857004e+08`, `1.5664279467186848e-04`).
- Objective constant: `+ c Constant` plus ` Constant = 1` last in Bounds (gurobipy 13.0.3; in every reference
  file it is the only bound line).
- Quadratic parts: objective `+ [ 2q x * y ... ] / 2 `, constraints `[ q x * y ] <= rhs`, squares `x ^2`.
Checked against gurobipy 13.0.3's own writer (tests/python/gurobipy_oracle.py): a model without a name has no
`\\ Model` line, squares are written `x ^2`, and a variable that occurs in no objective term, no row and no
quadratic term is written as a `0 name` term of the objective (in column order), so that reading the file back
gives the same columns.
"""
INF = 1e100
LIMIT = 75


def _format_sig(v, digits, fixed):
    if fixed:
        return "%.*g" % (digits, v)
    mant, exp = ("%.*e" % (digits - 1, v)).split("e")
    if "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    return mant + "e" + exp


def fmt_num(v):
    """Gurobi's number text: 16 significant digits for 0.1 <= |v| < 1e6, 15 for 1e-3 <= |v| < 0.1 (fixed
    notation), 17 in scientific notation otherwise; then a run of >= 9 zeros or nines before the last digit
    is rounded away (9.119999999999999 -> 9.12). Measured on 63,511 numbers of the reference LPs."""
    v = float(v)
    if v == 0.0:
        return "0"
    if v != v:
        return "nan"
    a = abs(v)
    if a >= INF:
        return "infinity" if v > 0 else "-infinity"
    fixed = 1e-3 <= a < 1e6
    digits = 16 if 0.1 <= a < 1e6 else 15 if fixed else 17
    s = _format_sig(v, digits, fixed)
    sig = s.split("e")[0].replace("-", "").replace(".", "").lstrip("0")
    body = sig[:-1]
    run = len(body) - len(body.rstrip("0")) or len(body) - len(body.rstrip("9"))
    if run >= 9:
        s = _format_sig(v, max(1, len(sig) - 1 - run), fixed)
    return s


def lp_name(name):
    """Names as written: whitespace becomes '_' (LP tokens are whitespace separated)."""
    if not name:
        return "_"
    return name.replace(" ", "_").replace("\t", "_").replace("\n", "_").replace("\r", "_")


class _Lines:
    """Accumulates tokens into lines, wrapping like Gurobi's writer."""

    def __init__(self, out):
        self.out = out
        self.line = ""
        self.limit = LIMIT
        self.has_token = False

    def start(self, prefix, limit=LIMIT, cont="  "):
        self.line = prefix
        self.limit = limit
        self.cont = cont
        self.has_token = False

    def add(self, token, limit_delta=0):
        if self.has_token and len(self.line) + len(token) > self.limit + limit_delta:
            self.out.append(self.line)
            self.line = self.cont + token
            self.limit = LIMIT
        else:
            self.line += token
        self.has_token = True

    def finish(self, suffix=""):
        self.out.append(self.line + suffix)
        self.line = ""


def _term(coef, name, first):
    if coef < 0:
        sign, mag = "-", -coef
    else:
        sign, mag = "+", coef
    body = name if mag == 1.0 else f"{fmt_num(mag)} {name}"
    if first:
        return f" {body}" if sign == "+" else f" - {body}"
    return f" {sign} {body}"


def _qterm(coef, n1, n2, first):
    prod = f"{n1} ^2" if n1 == n2 else f"{n1} * {n2}"
    return _term(coef, prod, first)


def _write_quadratic(lines, qterms, names, first):
    """qterms: list of (coef, i, j) already merged and sorted."""
    lines.add(" [" if first else " + [")
    for k, (c, i, j) in enumerate(qterms):
        lines.add(_qterm(c, names[i], names[j], k == 0))


def _bound_line(name, lb, ub, vtype):
    if vtype == "B":
        if lb <= 0.0 and ub >= 1.0:  # Gurobi writes no bounds for a 0/1 (or wider) binary
            return None
        ub = min(ub, 1.0)
    lb_inf = lb <= -INF
    ub_inf = ub >= INF
    if lb_inf and ub_inf:
        return f" {name} free"
    if lb_inf:
        return f" -infinity <= {name} <= {fmt_num(ub)}"
    if lb == ub:
        return f" {name} = {fmt_num(lb)}"
    if lb == 0.0 and ub_inf:
        return None
    if ub_inf:
        return f" {name} >= {fmt_num(lb)}"
    if lb == 0.0:
        return f" {name} <= {fmt_num(ub)}"
    return f" {fmt_num(lb)} <= {name} <= {fmt_num(ub)}"


def render_lp(snapshot):
    """snapshot: dict produced by Model._snapshot(); returns the LP text."""
    out = []
    if snapshot["model_name"]:
        out.append("\\ Model " + snapshot["model_name"])
    out.append("\\ LP format - for model browsing. Use MPS format to capture full model detail.")
    out.append("Maximize" if snapshot["sense"] == -1 else "Minimize")
    names = snapshot["var_names"]
    lines = _Lines(out)
    # The objective line starts with " " (an unnamed objective) and may run one character longer.
    lines.start(" ", LIMIT + 1)
    first = True
    # Columns that occur nowhere else are written with a zero objective coefficient, in column order.
    used = [False] * len(names)
    for row in snapshot["rows"]:
        for i, _ in row[1]:
            used[i] = True
        for _, i, j in (row[4] if len(row) > 4 and row[4] else ()):
            used[i] = used[j] = True
    for _, i, j in snapshot["qobj"] or ():
        used[i] = used[j] = True
    objc = dict(snapshot["obj"])
    obj_terms = [(i, objc[i] if i in objc else 0.0) for i in range(len(names)) if i in objc or not used[i]]
    for i, c in obj_terms:
        lines.add(_term(c, names[i], first))
        first = False
    if snapshot["objcon"] != 0.0:
        lines.add(_term(snapshot["objcon"], "Constant", False))  # always signed, even when first
        first = False
    if snapshot["qobj"]:
        _write_quadratic(lines, [(2.0 * c, i, j) for c, i, j in snapshot["qobj"]], names, first)
        lines.add(" ] / 2")
        lines.finish(" ")
    else:
        lines.finish()
    out.append("Subject To")
    for row in snapshot["rows"]:
        name, terms, sense, rhs = row[0], row[1], row[2], row[3]
        qterms = row[4] if len(row) > 4 else None
        lines.start(f" {name}:")
        first = True
        for i, c in terms:
            lines.add(_term(c, names[i], first))
            first = False
        if qterms:
            _write_quadratic(lines, qterms, names, first)
            lines.add(" ]")
        op = {"<": "<=", ">": ">=", "=": "="}[sense]
        if lines.has_token:
            lines.add(f" {op} {fmt_num(rhs)}", -1)  # the rhs wraps one character earlier
        else:
            lines.line += f" {op} {fmt_num(rhs)}"
        lines.finish()
    out.append("Bounds")
    for i, (lb, ub, vt) in enumerate(snapshot["bounds"]):
        b = _bound_line(names[i], lb, ub, vt)
        if b is not None:
            out.append(b)
    if snapshot["objcon"] != 0.0:  # after the columns' bounds, as gurobipy 13.0.3 writes it
        out.append(" Constant = 1")
    for title, code in (("Binaries", "B"), ("Generals", "I")):
        members = [names[i] for i, (_, _, vt) in enumerate(snapshot["bounds"]) if vt == code]
        if members:
            out.append(title)
            lines.start("", LIMIT, cont="")
            for n in members:
                lines.add(" " + n)
            lines.finish()
    out.append("End")
    return "\n".join(out) + "\n"
