"""COPT constants (the subset of coptpy's COPT class that modelling code uses) and CoptError.

Values are coptpy 8.0.7's (checked with tests/python/coptpy_oracle.py against the real coptpy of the reference
environment), so code comparing with literal numbers (`model.status == 1`) behaves the same.
"""


class CoptError(Exception):
    """coptpy's error: `retcode` and `message`, as the real one carries them."""

    def __init__(self, retcode=3, message=""):
        super().__init__(message)
        self.retcode = retcode
        self.message = message

    def __str__(self):
        return self.message


RETCODE_INVALID = 3     # "(INVALID) ..." in coptpy
RETCODE_LICENSE = 4     # the size-limited licence refuses the model
RETCODE_UNSUPPORTED = 10024  # not a COPT code: trex's layer refuses a feature (the text says "unsupported")


class _Names:
    """coptpy's attribute / information / parameter name classes: members are their own names."""

    def __init_subclass__(cls):
        for name in cls.__annotations__:
            setattr(cls, name, name)


class AttrConstClass(_Names):
    Cols: str
    PSDCols: str
    Rows: str
    Elems: str
    QElems: str
    Bins: str
    Ints: str
    Soss: str
    Cones: str
    QConstrs: str
    Indicators: str
    ObjSense: str
    ObjConst: str
    HasQObj: str
    IsMIP: str
    LpStatus: str
    MipStatus: str
    Status: str
    SimplexIter: str
    BarrierIter: str
    NodeCnt: str
    PoolSols: str
    HasLpSol: str
    HasBasis: str
    HasMipSol: str
    LpObjval: str
    LpObjVal: str
    BestObj: str
    BestBnd: str
    BestGap: str
    SolvingTime: str


class InfoConstClass(_Names):
    Obj: str
    LB: str
    UB: str
    Value: str
    Slack: str
    Dual: str
    RedCost: str


class ParamConstClass(_Names):
    TimeLimit: str
    NodeLimit: str
    RelGap: str
    AbsGap: str
    Logging: str
    LogToConsole: str
    Threads: str
    MipTasks: str
    Presolve: str
    Scaling: str
    Dualize: str
    LpMethod: str
    FeasTol: str
    DualTol: str
    IntTol: str
    CutLevel: str
    HeurLevel: str
    RoundingHeurLevel: str
    DivingHeurLevel: str
    StrongBranching: str
    ConflictAnalysis: str
    InfOrUnbInfo: str


# Parameter defaults as coptpy 8.0.7 reports them (getParam); any other name is accepted and stored.
PARAM_DEFAULTS = {"timelimit": 1e20, "nodelimit": -1, "relgap": 1e-4, "absgap": 1e-6, "logging": 1,
                  "logtoconsole": 1, "threads": -1, "presolve": -1, "feastol": 1e-6, "dualtol": 1e-6,
                  "inttol": 1e-6, "lpmethod": -1}


class COPT:
    # Objective senses
    MINIMIZE = 1
    MAXIMIZE = -1
    # Variable types
    CONTINUOUS = "C"
    BINARY = "B"
    INTEGER = "I"
    # Constraint senses
    LESS_EQUAL = "L"
    GREATER_EQUAL = "G"
    EQUAL = "E"
    FREE = "N"
    RANGE = "R"
    INFINITY = 1e30
    UNDEFINED = 1e40
    # Solution statuses (model.status, LpStatus, MipStatus)
    UNSTARTED = 0
    OPTIMAL = 1
    INFEASIBLE = 2
    UNBOUNDED = 3
    INF_OR_UNB = 4
    NUMERICAL = 5
    NODELIMIT = 6
    IMPRECISE = 7
    TIMEOUT = 8
    UNFINISHED = 9
    INTERRUPTED = 10
    ITERLIMIT = 11
    LOCAL_OPTIMAL = 20      # a nonconvex model's local optimum (COPT does not prove it global)
    LOCAL_INFEASIBLE = 21
    # SOS, indicator and general-constraint constants
    SOS_TYPE1 = 1
    SOS_TYPE2 = 2
    INDICATOR_IF = 1
    INDICATOR_ONLYIF = 2
    INDICATOR_IFANDONLYIF = 3
    GENCONSTR_ABS = 1
    GENCONSTR_AND = 2
    GENCONSTR_MAX = 3
    GENCONSTR_MIN = 4
    GENCONSTR_OR = 5
    GENCONSTR_PWL = 6
    VERSION_MAJOR = 8
    VERSION_MINOR = 0
    VERSION_TECHNICAL = 7

    Attr = AttrConstClass
    attr = AttrConstClass
    Info = InfoConstClass
    info = InfoConstClass
    Param = ParamConstClass
    param = ParamConstClass


STATUS_NAMES = {v: k for k, v in vars(COPT).items()
                if k in ("UNSTARTED", "OPTIMAL", "INFEASIBLE", "UNBOUNDED", "INF_OR_UNB", "NUMERICAL", "NODELIMIT",
                         "IMPRECISE", "TIMEOUT", "UNFINISHED", "INTERRUPTED", "ITERLIMIT", "LOCAL_OPTIMAL",
                         "LOCAL_INFEASIBLE")}
