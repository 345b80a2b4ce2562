from flydsl_ls.analysis.model.diagnostic import Severity
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid


class SyntaxErrorRule(Rule):
    """
    The file does not parse as Python.

    One diagnostic is reported at the position of the error. The other rules still look
    at the rest of the file: the lines of the broken statement (found from the error,
    usually the line being typed) are set aside, so a half-typed statement does not make
    the file's other findings disappear; findings on those lines are dropped, and no fix
    is offered until the file parses again. The language server keeps the last model that
    parsed, so hover keeps working while you type.
    """

    code = "FLY000"
    name = "syntax-error"
    summary = "The file does not parse"
    replacement = "Fix the syntax error"
    fix_safety = "none"
    deprecated_tag = False
    severity = Severity.ERROR

    VALID = [Valid("x = 1\n")]
    INVALID = [
        Invalid("def kernel(:\n    pass\n", line=1, column=12, message="SyntaxError"),
        Invalid("x = (1,\ny = 2\n", line=1, message="SyntaxError"),
    ]
