"""trex_pulp: runs PuLP answers on Debian's python3-pulp with Debian's CBC (/usr/bin/cbc, package coinor-cbc).

PuLP from PyPI ships a CBC binary and makes it the default solver (PULP_CBC_CMD). Debian's python3-pulp 2.6.0
removes that binary: PULP_CBC_CMD raises "PULP_CBC_CMD: Not Available", and the default solver falls back to
GLPK's glpsol when glpk-utils is installed. install() restores what an answer written against PyPI's PuLP
expects: PULP_CBC_CMD (and the default solver, and getSolver("PULP_CBC_CMD")) run /usr/bin/cbc through PuLP's
own COIN_CMD interface, with every option of PULP_CBC_CMD (msg, timeLimit, gapRel, ...). It is called by the
wrapper that runs a PuLP answer (src/oreval/api_wrappers.cpp), in the answer's own process, so that the
solver's temporary files go to that process's $TMPDIR (the sandbox's working folder).

confirm() re-solves a problem whose CBC verdict is infeasible or unbounded with trex (issue #25 point 5: such a
verdict is never CBC's word alone; trex's solve confirms it without CBC's preprocessing and by GLPK): PuLP's own LP
file goes to the evaluator's solve channel ($TREX_SOLVE_FD, inside `trex eval`'s fork server) or to `trex solve`.
"""
import os
import subprocess
import tempfile

CBC = "/usr/bin/cbc"


def install(cbc=CBC):
    """Points PuLP's PULP_CBC_CMD and default solver at `cbc`. Returns the PULP_CBC_CMD class now in use."""
    import pulp
    from pulp import apis
    from pulp.apis import coin_api

    if not os.access(cbc, os.X_OK):
        raise RuntimeError(f"trex_pulp: {cbc} is not an executable (Debian package coinor-cbc)")
    base = coin_api.COIN_CMD

    class PULP_CBC_CMD(base):
        """PuLP's PULP_CBC_CMD on Debian's CBC (same arguments; path= is refused as PuLP refuses it)."""
        name = "PULP_CBC_CMD"
        pulp_cbc_path = cbc

        def __init__(self, mip=True, msg=True, timeLimit=None, fracGap=None, maxSeconds=None, gapRel=None,
                     gapAbs=None, presolve=None, cuts=None, strong=None, options=None, warmStart=False,
                     keepFiles=False, path=None, threads=None, logPath=None, mip_start=False,
                     timeMode="elapsed"):
            if path is not None:
                raise pulp.PulpSolverError("Use COIN_CMD if you want to set a path")
            base.__init__(self, mip=mip, msg=msg, timeLimit=timeLimit, fracGap=fracGap, maxSeconds=maxSeconds,
                          gapRel=gapRel, gapAbs=gapAbs, presolve=presolve, cuts=cuts, strong=strong,
                          options=options, warmStart=warmStart, keepFiles=keepFiles, path=cbc, threads=threads,
                          logPath=logPath, mip_start=mip_start, timeMode=timeMode)

        def copy(self):
            return base.copy(self)

    for module in (pulp, apis, coin_api):
        module.PULP_CBC_CMD = PULP_CBC_CMD
    if hasattr(pulp, "pulp"):
        pulp.pulp.PULP_CBC_CMD = PULP_CBC_CMD
    solvers = getattr(apis, "_all_solvers", None)
    if isinstance(solvers, list):
        solvers[:] = [PULP_CBC_CMD if getattr(s, "name", "") == "PULP_CBC_CMD" else s for s in solvers]
    default = PULP_CBC_CMD(msg=False)
    for module in (pulp, apis, getattr(pulp, "pulp", None)):
        if module is not None and hasattr(module, "LpSolverDefault"):
            module.LpSolverDefault = default
    return PULP_CBC_CMD


def confirm(prob, time_limit=None):
    """trex's verdict on `prob` (a pulp.LpProblem): {"status", "objective" (with the objective's constant, which
    PuLP's LP file leaves out), "checks" (trex's re-solves), "overruled", "message"}."""
    from trex_gurobipy import solve as trex_solve  # the gurobipy layer's client of trex's solver

    with tempfile.TemporaryDirectory(prefix="trex_pulp_") as tmp:
        path = os.path.join(tmp, "problem.lp")
        prob.writeLP(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        fd = trex_solve._service_fd()
        if fd is not None:
            answer = trex_solve._solve_via_service(fd, text, float(time_limit or 0.0))
        else:
            cmd = [trex_solve.trex_binary(), "solve", path, "--json"]
            if time_limit:
                cmd += ["--time-limit", repr(float(time_limit))]
            answer = trex_solve._parse_answer(subprocess.run(cmd, capture_output=True, text=True))
    objective = answer.get("objective")
    if isinstance(objective, (int, float)) and prob.objective is not None:
        objective = float(objective) + float(prob.objective.constant)
    return {"status": answer.get("status"), "objective": objective, "checks": answer.get("verdict_checks") or [],
            "overruled": bool(answer.get("overruled")), "message": answer.get("message", "")}
