"""The fx types the semantic model infers, and where each inference came from."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# fx numeric classes (flydsl.expr.numeric); all are typed values with operators.
_NUMERIC = re.compile(r"^((Int|Uint)(8|16|32|64|128)|Index|Boolean|BFloat16|Float(8|16|32|64)\w*|TFloat32)$")

PY_INT, PY_FLOAT, PY_BOOL, PY_STR = "int", "float", "bool", "str"
VECTOR = "fx.Vector"
RAW = "ir.Value"
ARITH_VALUE = "ArithValue"
TENSOR = "fx.Tensor"
LAYOUT = "layout"
ATOM = "atom"
POINTER = "pointer"
UNKNOWN = "unknown"


@lru_cache(maxsize=4096)  # asked of every fx call's name (40,000 times over the corpus)
def is_numeric_class(name: str) -> bool:
    return bool(_NUMERIC.match(name))


@dataclass(frozen=True)
class FxType:
    name: str
    origin: str = ""  # how it was inferred, for hover: "fx.Int32(...) on line 12"
    line: int | None = None  # 1-based source line of the origin

    @property
    def known(self) -> bool:
        return self.name != UNKNOWN

    @property
    def is_python(self) -> bool:
        """A compile-time Python scalar."""
        return self.name in (PY_INT, PY_FLOAT, PY_BOOL)

    @property
    def is_fx_scalar(self) -> bool:
        return self.name.startswith("fx.") and is_numeric_class(self.name[3:])

    @property
    def is_typed(self) -> bool:
        """An fx value that already overloads Python operators."""
        return self.is_fx_scalar or self.name in (VECTOR, ARITH_VALUE)

    @property
    def is_raw(self) -> bool:
        return self.name == RAW

    def describe(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.name}: {self.origin}{where}" if self.origin else self.name


UNKNOWN_TYPE = FxType(UNKNOWN)


def join(types: list[FxType]) -> FxType:
    """One type when every inference agrees, else unknown."""
    names = {t.name for t in types}
    if len(names) == 1:
        return types[-1]
    return UNKNOWN_TYPE
