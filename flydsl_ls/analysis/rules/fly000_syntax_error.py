from flydsl_ls.analysis.diagnostic import Severity
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid


class SyntaxErrorRule(Rule):
    """
    The file does not parse as Python, so no other rule can look at it.

    One diagnostic is reported at the position of the error; the other rules are skipped
    for this file. The language server keeps the last model that parsed, so hover keeps
    working while you type.
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
