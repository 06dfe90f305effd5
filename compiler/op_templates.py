"""Parsing an op whose line was seen before, up to its SSA names, without xDSL's format parser.

A program of 10^5 ops spells a few dozen op *templates*: one op name, attribute dictionary and
types, written again and again with other SSA names::

    %qkv7 = nn.add %qkv_mm7, %qkv_b : tensor<1x8x192xf32>, tensor<192xf32> -> tensor<1x8x192xf32>

xDSL lexes and interprets the declarative assembly format token by token for each of them (two
thirds of the parse time). `TemplateParser` parses the first op of each template with xDSL, learns
from the op it built which textual operand goes to which operand slot, and builds every later op
of that template directly: the same op class, result types, properties and attributes (shared:
attributes are immutable), its operands looked up by name.

Only ops for which the text determines the op are learnt: one line, one result named
``%name =``, a registered op in generic form or in a declarative assembly format that ends with
the type of a single operand or result, no regions, successors or ``loc(...)``, distinct operand
names all defined above. Anything else, and any line whose operands are not yet defined or have
other types than the template's, goes to xDSL's parser, which then reports errors exactly as
before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import UnknownLoc, UnregisteredOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, VariadicDef
from xdsl.parser import Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

# An SSA name as xDSL's lexer reads it (``%`` and a suffix-id).
_SSA_NAME = r"%(?:[0-9]+|[a-zA-Z$._-][a-zA-Z0-9$._-]*)"
_SSA_NAME_SPLIT = re.compile(f"({_SSA_NAME})")

# ``%res = op.name rest`` on one line. ``rest`` holds no comment, block label, attribute alias
# or tuple index (``//``, ``^``, ``#``) outside string literals, and string literals hold no
# ``%``, escape or newline, so that every SSA name in it is an operand.
_OP_LINE = re.compile(
    rf"({_SSA_NAME})[ \t]*=[ \t]*"
    r'(?:([a-zA-Z_][a-zA-Z0-9_$.]*)|"([a-zA-Z_][a-zA-Z0-9_$.]*)")'
    r'((?:[^\n"/#^]|"[^"\\\n%]*")*)'
)

# Whitespace and comments between tokens, as xDSL's lexer skips them.
_BLANK = re.compile(r"(?://[^\n]*\n?|\s+)*")

# The tokens that may follow an op without being read as part of it (the next op's result, op
# name or generic name, a block's end or label, the end of the input); ``loc`` is the exception.
_NEXT_KINDS = frozenset(
    {
        MLIRTokenKind.PERCENT_IDENT,
        MLIRTokenKind.BARE_IDENT,
        MLIRTokenKind.STRING_LIT,
        MLIRTokenKind.R_BRACE,
        MLIRTokenKind.CARET_IDENT,
        MLIRTokenKind.EOF,
    }
)

# A declarative format's last directive: ``type($x)`` or ``functional-type(..., $x)``.
_LAST_TYPE = re.compile(r"(?:functional-type\([^()]*,|\btype\()\s*\$(\w+)\s*\)\s*$")


@dataclass(frozen=True)
class OpLine:
    """One ``%res = op ...`` line: its template key, operand names and where it ends."""

    key: tuple[str, ...]
    operands: tuple[str, ...]
    """The operand names in textual order, without ``%``."""
    result: str
    result_span: tuple[int, int]
    end: int
    """Offset just after the op's last character (trailing blanks excluded)."""


@dataclass(frozen=True)
class OpTemplate:
    op_type: type[Operation]
    slots: tuple[int, ...]
    """Operand slot of each textual operand."""
    operand_types: tuple[Attribute, ...]
    """Type of each textual operand."""
    result_types: tuple[Attribute, ...]
    properties: dict[str, Attribute]
    attributes: dict[str, Attribute]


def match_op_line(text: str, offset: int) -> OpLine | None:
    """The op line starting at ``offset``, or None when it is not of the one-line shape."""
    m = _OP_LINE.match(text, offset)
    if m is None:
        return None
    rest = m.group(4).rstrip()
    end = m.start(4) + len(rest)
    parts = _SSA_NAME_SPLIT.split(rest)
    generic = m.group(2) is None
    name = m.group(3) if generic else m.group(2)
    key = (name, "generic" if generic else "custom", *parts[0::2])
    operands = tuple(p[1:] for p in parts[1::2])
    return OpLine(key, operands, m.group(1)[1:], (m.start(1), m.end(1)), end)


def learnable_format(op_type: type[Operation]) -> bool:
    """Whether ``op_type``'s custom form is a declarative format that stops at a single type
    (so that nothing after the line could have been read as part of the op)."""
    if not issubclass(op_type, IRDLOperation):
        return False
    op_def = op_type.get_irdl_definition()
    if op_def.assembly_format is None:
        return False
    m = _LAST_TYPE.search(op_def.assembly_format)
    if m is None:
        return False
    defs = dict(op_def.operands) | dict(op_def.results)
    last = defs.get(m.group(1))
    return last is not None and not isinstance(last, VariadicDef)


_RETRY = object()
"""`TemplateParser._learn`'s answer when this op cannot serve but a later op of its template may
(an operand defined below, the same operand twice)."""


class TemplateParser(Parser):
    """xDSL's parser with the op-template fast path (see the module docstring)."""

    def __init__(
        self,
        ctx: Context,
        text: str,
        name: str,
        lexer: MLIRLexer | None = None,
        use_templates: bool = True,
    ):
        super().__init__(ctx, "", name)
        self._parser_state = ParserState(lexer or MLIRLexer(Input(text, name)))
        self._text = text
        self._templates: dict[tuple[str, ...], OpTemplate | None] = {}
        self.use_templates = use_templates
        self.template_hits = 0
        """Ops built from a template (for tests)."""

    def parse_operation(self) -> Operation:
        if not self.use_templates:
            return super().parse_operation()
        line = match_op_line(self._text, self._current_token.span.start)
        if line is not None:
            template = self._templates.get(line.key)
            if template is not None:
                op = self._instantiate(template, line)
                if op is not None:
                    self.template_hits += 1
                    return op
        op = super().parse_operation()
        if line is not None and line.key not in self._templates:
            template = self._learn(op, line)
            if template is not _RETRY:
                self._templates[line.key] = template  # pyright: ignore[reportArgumentType]
        return op

    def _learn(self, op: Operation, line: OpLine) -> OpTemplate | None | object:
        """A template from the op xDSL built from ``line``; None if no op of ``line``'s
        template can serve, `_RETRY` if only this one cannot."""
        op_type = type(op)
        generic = line.key[1] == "generic"
        if (
            isinstance(op, UnregisteredOp)
            or op.name != line.key[0]
            or not isinstance(op.location, UnknownLoc)
            or op.regions
            or op.successors
            or len(op.results) != 1
            or not (generic or learnable_format(op_type))
        ):
            return None
        next_start = self._current_token.span.start
        if next_start < line.end or _BLANK.fullmatch(self._text, line.end, next_start) is None:
            return None
        values: list[SSAValue] = []
        for name in line.operands:
            defined = self.ssa_values.get(name)
            if defined is None:
                return _RETRY
            values.append(defined[0])
        operands = list(op.operands)
        if len(values) != len(operands):
            return _RETRY
        slot_of = {id(v): i for i, v in enumerate(operands)}
        if len(slot_of) != len(operands) or any(id(v) not in slot_of for v in values):
            return _RETRY  # the same value twice
        return OpTemplate(
            op_type,
            tuple(slot_of[id(v)] for v in values),
            tuple(v.type for v in values),
            tuple(r.type for r in op.results),
            dict(op.properties),
            dict(op.attributes),
        )

    def _instantiate(self, template: OpTemplate, line: OpLine) -> Operation | None:
        """The op of ``line`` built from ``template``; None (nothing consumed) when xDSL must
        parse it: an operand not defined yet or of another type, or a token after the line that
        xDSL would read as part of the op."""
        operands: list[SSAValue | None] = [None] * len(template.slots)
        ssa_values = self.ssa_values
        for name, slot, expected in zip(
            line.operands, template.slots, template.operand_types, strict=True
        ):
            defined = ssa_values.get(name)
            if defined is None:
                return None
            value = defined[0]
            if value.type is not expected and value.type != expected:
                return None
            operands[slot] = value
        start = self._current_token.span.start
        self._resume_from(line.end)
        token = self._current_token
        if token.kind not in _NEXT_KINDS or (
            token.kind is MLIRTokenKind.BARE_IDENT and token.text == "loc"
        ):
            self._resume_from(start)
            return None
        op = template.op_type.create(
            operands=operands,  # pyright: ignore[reportArgumentType]
            result_types=template.result_types,
            properties=template.properties,
            attributes=template.attributes,
        )
        lexer_input = token.span.input
        span = Span(line.result_span[0], line.result_span[1], lexer_input)
        self._register_ssa_definition(line.result, op.results, span)
        return op
