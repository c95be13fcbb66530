"""GRB constants (the subset of gurobipy's GRB class that modelling code uses) and GurobiError.

Values match Gurobi 12 so code that compares against literal numbers (status 2 == OPTIMAL) behaves the same.
"""


class GurobiError(Exception):
    """Raised for API misuse and for features this layer refuses (errno 10024, message `unsupported: ...`)."""

    def __init__(self, errno_or_msg=None, message=None):
        if message is None:
            message, errno = str(errno_or_msg), 10003
        else:
            errno = errno_or_msg
        super().__init__(message)
        self.errno = errno
        self.message = message

    def __str__(self):
        return self.message


# Error codes used by this layer.
ERROR_UNSUPPORTED = 10024          # Gurobi's GRB.Error.NOT_SUPPORTED
ERROR_INVALID_ARGUMENT = 10003
ERROR_DATA_NOT_AVAILABLE = 10005
ERROR_UNKNOWN_ATTRIBUTE = 10004
ERROR_UNKNOWN_PARAMETER = 10007


class _Namespace:
    """Attribute bag whose members are also reachable as GRB.<name>."""


class StatusConstClass:
    LOADED = 1
    OPTIMAL = 2
    INFEASIBLE = 3
    INF_OR_UNBD = 4
    UNBOUNDED = 5
    CUTOFF = 6
    ITERATION_LIMIT = 7
    NODE_LIMIT = 8
    TIME_LIMIT = 9
    SOLUTION_LIMIT = 10
    INTERRUPTED = 11
    NUMERIC = 12
    SUBOPTIMAL = 13
    INPROGRESS = 14
    USER_OBJ_LIMIT = 15
    WORK_LIMIT = 16
    MEM_LIMIT = 17


STATUS_NAMES = {v: k for k, v in vars(StatusConstClass).items() if not k.startswith("_")}


class AttrConstClass:
    # Model attributes
    NumVars = "NumVars"
    NumConstrs = "NumConstrs"
    NumQConstrs = "NumQConstrs"
    NumGenConstrs = "NumGenConstrs"
    NumObj = "NumObj"
    IsMultiObj = "IsMultiObj"
    ObjNVal = "ObjNVal"
    ObjNName = "ObjNName"
    ObjNPriority = "ObjNPriority"
    ObjNWeight = "ObjNWeight"
    ObjNRelTol = "ObjNRelTol"
    ObjNAbsTol = "ObjNAbsTol"
    ObjNCon = "ObjNCon"
    GenConstrName = "GenConstrName"
    GenConstrType = "GenConstrType"
    NumIntVars = "NumIntVars"
    NumBinVars = "NumBinVars"
    NumNZs = "NumNZs"
    IsMIP = "IsMIP"
    IsQP = "IsQP"
    IsQCP = "IsQCP"
    ModelName = "ModelName"
    ModelSense = "ModelSense"
    ObjCon = "ObjCon"
    ObjVal = "ObjVal"
    ObjBound = "ObjBound"
    ObjBoundC = "ObjBoundC"
    MIPGap = "MIPGap"
    Runtime = "Runtime"
    Status = "Status"
    SolCount = "SolCount"
    IterCount = "IterCount"
    BarIterCount = "BarIterCount"
    NodeCount = "NodeCount"
    # Variable attributes
    LB = "LB"
    UB = "UB"
    Obj = "Obj"
    VType = "VType"
    VarName = "VarName"
    X = "X"
    Xn = "Xn"
    Start = "Start"
    RC = "RC"
    VBasis = "VBasis"
    # Constraint attributes
    ConstrName = "ConstrName"
    Sense = "Sense"
    RHS = "RHS"
    Pi = "Pi"
    Slack = "Slack"
    CBasis = "CBasis"
    QCName = "QCName"
    QCSense = "QCSense"
    QCRHS = "QCRHS"


class ParamConstClass:
    OutputFlag = "OutputFlag"
    LogToConsole = "LogToConsole"
    LogFile = "LogFile"
    TimeLimit = "TimeLimit"
    MIPGap = "MIPGap"
    MIPGapAbs = "MIPGapAbs"
    MIPFocus = "MIPFocus"
    Threads = "Threads"
    Seed = "Seed"
    Method = "Method"
    Presolve = "Presolve"
    NonConvex = "NonConvex"
    FeasibilityTol = "FeasibilityTol"
    OptimalityTol = "OptimalityTol"
    IntFeasTol = "IntFeasTol"
    NodeLimit = "NodeLimit"
    SolutionLimit = "SolutionLimit"
    IterationLimit = "IterationLimit"
    Heuristics = "Heuristics"
    Cuts = "Cuts"
    DualReductions = "DualReductions"
    InfUnbdInfo = "InfUnbdInfo"
    PoolSolutions = "PoolSolutions"
    PoolSearchMode = "PoolSearchMode"
    NumericFocus = "NumericFocus"
    BestObjStop = "BestObjStop"
    Cutoff = "Cutoff"
    ObjNumber = "ObjNumber"


class ErrorConstClass:
    OUT_OF_MEMORY = 10001
    NULL_ARGUMENT = 10002
    INVALID_ARGUMENT = 10003
    UNKNOWN_ATTRIBUTE = 10004
    DATA_NOT_AVAILABLE = 10005
    INDEX_OUT_OF_RANGE = 10006
    UNKNOWN_PARAMETER = 10007
    VALUE_OUT_OF_RANGE = 10008
    NO_LICENSE = 10009
    SIZE_LIMIT_EXCEEDED = 10010
    NOT_SUPPORTED = 10024
    QCP_EQUALITY_CONSTRAINT = 10021
    MODEL_MODIFICATION = 10029


class GRB:
    # Model senses
    MINIMIZE = 1
    MAXIMIZE = -1
    # Variable types
    CONTINUOUS = "C"
    BINARY = "B"
    INTEGER = "I"
    SEMICONT = "S"
    SEMIINT = "N"
    # Constraint senses
    LESS_EQUAL = "<"
    GREATER_EQUAL = ">"
    EQUAL = "="
    INFINITY = 1e100
    UNDEFINED = 1e101
    MAXINT = 2000000000
    # Statuses
    LOADED = StatusConstClass.LOADED
    OPTIMAL = StatusConstClass.OPTIMAL
    INFEASIBLE = StatusConstClass.INFEASIBLE
    INF_OR_UNBD = StatusConstClass.INF_OR_UNBD
    UNBOUNDED = StatusConstClass.UNBOUNDED
    CUTOFF = StatusConstClass.CUTOFF
    ITERATION_LIMIT = StatusConstClass.ITERATION_LIMIT
    NODE_LIMIT = StatusConstClass.NODE_LIMIT
    TIME_LIMIT = StatusConstClass.TIME_LIMIT
    SOLUTION_LIMIT = StatusConstClass.SOLUTION_LIMIT
    INTERRUPTED = StatusConstClass.INTERRUPTED
    NUMERIC = StatusConstClass.NUMERIC
    SUBOPTIMAL = StatusConstClass.SUBOPTIMAL
    INPROGRESS = StatusConstClass.INPROGRESS
    USER_OBJ_LIMIT = StatusConstClass.USER_OBJ_LIMIT
    WORK_LIMIT = StatusConstClass.WORK_LIMIT
    MEM_LIMIT = StatusConstClass.MEM_LIMIT
    # SOS types; general-constraint types (gurobipy 13.0.3's values; genconstr.py reformulates MAX, MIN, ABS, AND,
    # OR, INDICATOR and PWL, the others are refused)
    SOS_TYPE1 = 1
    SOS_TYPE2 = 2
    GENCONSTR_MAX = 0
    GENCONSTR_MIN = 1
    GENCONSTR_ABS = 2
    GENCONSTR_AND = 3
    GENCONSTR_OR = 4
    GENCONSTR_NORM = 5
    GENCONSTR_NL = 6
    GENCONSTR_INDICATOR = 7
    GENCONSTR_PWL = 8
    GENCONSTR_POLY = 9
    GENCONSTR_EXP = 10
    GENCONSTR_EXPA = 11
    GENCONSTR_LOG = 12
    GENCONSTR_LOGA = 13
    GENCONSTR_POW = 14
    GENCONSTR_SIN = 15
    GENCONSTR_COS = 16
    GENCONSTR_TAN = 17
    GENCONSTR_LOGISTIC = 18
    # Basis statuses
    BASIC = 0
    NONBASIC_LOWER = -1
    NONBASIC_UPPER = -2
    SUPERBASIC = -3

    Status = StatusConstClass
    status = StatusConstClass
    Attr = AttrConstClass
    attr = AttrConstClass
    Param = ParamConstClass
    param = ParamConstClass
    Error = ErrorConstClass
    error = ErrorConstClass
