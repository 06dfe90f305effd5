"""Source locations and one-line diagnostics.

xDSL attaches a location to an op only when the text spells ``loc(...)``, and a
``VerifyException`` carries none. fusec stamps every parsed op with the ``file:line:col`` of its
first token, verifies op by op, and reports each error as one line::

    model.mlir:12:5: error: 'nn.add' operands do not broadcast: lhs (...) and rhs (...)
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue, TypeAttribute
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from fusec.compiler.gc_pause import paused_gc
from fusec.dialects.donation import aliased_outputs
from fusec.dialects.locations import first_place
from fusec.compiler.op_templates import TemplateParser
from fusec.compiler.signature_verify import SignatureVerifier


class FusecError(Exception):
    """A user-facing error whose ``str()`` is one line, ``file:line:col: error: ...``."""


class _Lexer(MLIRLexer):
    """xDSL's lexer with a string-literal pattern that runs in linear time.

    xDSL 0.74 matches string literals with ``"(?:[^"...]+|\\...)*"``: on an unterminated
    string the nested repetition backtracks exponentially, and a stray ``"`` in a 40-character
    line hangs the parser for minutes. Matching one character per repetition accepts the same
    strings and fails at once.
    """

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


# A ranked tensor type with static dimensions, spelled the one way the printer spells it.
_STATIC_TENSOR_TYPE = re.compile(
    r"tensor<(?:[0-9]+x)*(?:f16|bf16|f32|f64|i1|i8|i16|i32|i64|index)>"
)


# An attribute dictionary without nested braces (strings may hold anything but quotes).
_FLAT_ATTR_DICT = re.compile(r'\{(?:[^{}"]|"[^"\\\n]*")*\}')


class LineIndex:
    """``file:line:col`` of an offset in a text in O(log lines): the line starts are found once.

    (xDSL's ``Span.get_location`` counts the newlines from the start of the text at each call,
    which made locating every op of a program quadratic in its size.)
    """

    def __init__(self, text: str):
        self.starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column (in code points) of ``offset``."""
        line = bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1


_INTEGER_TYPE = re.compile(r"[su]?i(\d+)$")
MAX_INTEGER_WIDTH = (1 << 24) - 1
"""The widest integer type MLIR allows (``IntegerType::kMaxWidth``)."""
MAX_DENSE_ELEMENTS = 1 << 28
"""The most elements of a dense constant read from text: a splat is spelled out as a Python
list of that many values (an f32 constant of 2^28 elements is 1 GiB, Llama-7B's embedding
table 2^27)."""


class LocatedParser(TemplateParser):
    """A parser that gives every op the location of its first token.

    It also parses a static tensor type or a flat attribute dictionary it has seen before by
    looking its text up: a program of 10^5 ops spells a handful of types hundreds of thousands of
    times, and xDSL's type parser (a dozen tokens and calls per type) was a third of the parse
    time. Attributes are immutable, so ops may share them; each op gets its own dictionary.
    A whole op line seen before up to its SSA names is built from its template
    (`TemplateParser`).
    """

    def __init__(
        self,
        ctx: Context,
        text: str,
        name: str,
        line_offset: int = 0,
        use_templates: bool = True,
    ):
        super().__init__(ctx, text, name, _Lexer(Input(text, name)), use_templates)
        self.line_offset = line_offset
        self._lines: LineIndex | None = None
        self._types: dict[str, TypeAttribute] = {}
        self._attr_dicts: dict[str, dict[str, Attribute]] = {}
        self._file_attr = StringAttr(name)
        self._columns: dict[int, IntAttr] = {}

    def parse_optional_type(self) -> TypeAttribute | None:
        token = self._current_token
        start = token.span.start
        if token.kind is not MLIRTokenKind.BARE_IDENT or not self._text.startswith(
            "tensor<", start
        ):
            return super().parse_optional_type()
        match = _STATIC_TENSOR_TYPE.match(self._text, start)
        if match is None:
            return super().parse_optional_type()
        spelled = match.group()
        cached = self._types.get(spelled)
        if cached is None:
            parsed = super().parse_optional_type()
            if parsed is not None and self._current_token.span.start >= match.end():
                self._types[spelled] = parsed
            return parsed
        self._resume_from(match.end())
        return cached

    def _parse_optional_integer_or_float_type(self) -> TypeAttribute | None:
        """As xDSL's, refusing at its token an integer type wider than MLIR allows
        (`MAX_INTEGER_WIDTH`: xDSL builds the bounds of such a type's values as Python
        integers, so a mangled ``i4294967296`` took seconds per attribute, fuzz mutant 96) or
        of no bits (``array<i0: 0>`` divided by its element size, fuzz mutant 102535)."""
        token = self._current_token
        if token.kind is MLIRTokenKind.BARE_IDENT:
            match = _INTEGER_TYPE.match(token.text)
            if match is not None and int(match.group(1)) > MAX_INTEGER_WIDTH:
                raise ParseError(token.span, f"integer type {token.text} is wider than "
                                             f"{MAX_INTEGER_WIDTH} bits")
            if match is not None and int(match.group(1)) == 0:
                raise ParseError(token.span, f"integer type {token.text} has no bits; fusec "
                                             "takes integers of 1 bit and more")
        return super()._parse_optional_integer_or_float_type()

    def _parse_dense_literal_type(self) -> Any:
        """As xDSL's, refusing the type of a dense constant of more than
        `MAX_DENSE_ELEMENTS` elements before xDSL spells its splat out element by element
        (``dense<1.0> : tensor<99999999999x9x5xf32>`` ran out of memory: fuzz mutant
        100311)."""
        start = self._current_token.span.start
        parsed = super()._parse_dense_literal_type()
        count = math.prod(parsed.get_shape())
        if count > MAX_DENSE_ELEMENTS:
            self.raise_error(f"a dense constant of {count} elements; fusec reads at most "
                             f"{MAX_DENSE_ELEMENTS} (2^28) from text", start,
                             self._current_token.span.start)
        return parsed

    def parse_optional_attr_dict(self) -> dict[str, Attribute]:
        """An attribute dictionary seen before is looked up by its spelling, as types are
        (``{axis = 2 : i64, start = 0 : i64, length = 64 : i64}`` costs ~40 tokens)."""
        token = self._current_token
        if token.kind is not MLIRTokenKind.L_BRACE:
            return super().parse_optional_attr_dict()
        match = _FLAT_ATTR_DICT.match(self._text, token.span.start)
        if match is None:
            return super().parse_optional_attr_dict()
        spelled = match.group()
        cached = self._attr_dicts.get(spelled)
        if cached is None:
            parsed = super().parse_optional_attr_dict()
            if self._current_token.span.start >= match.end():
                self._attr_dicts[spelled] = dict(parsed)
            return parsed
        self._resume_from(match.end())
        return dict(cached)

    def location_of(self, offset: int) -> tuple[int, int]:
        if self._lines is None:
            self._lines = LineIndex(self._text)
        return self._lines.line_col(offset)

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        try:
            op = super().parse_operation()
        except VerifyException as e:
            # A property or type constraint checked while the custom format is parsed (e.g.
            # ``axis = 1.0 : f32`` where an i64 is expected): report it at the op, as a parse
            # error, so that it has a location like every other one.
            name = op_name_at(start.input.content, start.start)
            raise ParseError(start, op_message(name, str(e))) from None
        except ParseError as e:
            # xDSL points after an unknown op's name; point at the name, as mlir-opt does.
            name = op_name_at(start.input.content, start.start)
            if name is None or e.msg != f"Operation {name} is not registered":
                raise
            at = start.input.content.index(name, start.start)
            span = Span(at, at + len(name), start.input)
            raise ParseError(span, f"unknown operation '{name}'") from None
        if isinstance(op.location, UnknownLoc):
            line, col = self.location_of(start.start)
            op.location = self._location(line + self.line_offset, col)
        return op

    def _location(self, line: int, col: int) -> FileLineColLoc:
        """``FileLineColLoc(file, IntAttr(line), IntAttr(col))`` without xDSL's check of its
        parameters' kinds, which are right by construction (the check was 7 of an op's ~40 us;
        columns repeat, so their ``IntAttr`` is shared)."""
        column = self._columns.get(col)
        if column is None:
            column = self._columns[col] = IntAttr(col)
        loc = FileLineColLoc.__new__(FileLineColLoc)
        object.__setattr__(loc, "filename", self._file_attr)
        object.__setattr__(loc, "line", IntAttr(line))
        object.__setattr__(loc, "column", column)
        return loc

    def at_end(self) -> bool:
        """Whether nothing but whitespace and comments is left to parse."""
        return self._current_token.kind == MLIRTokenKind.EOF


_OP_NAME = re.compile(r'\s*(?:%[^=]*=\s*)?"?([A-Za-z_][\w$]*\.[\w$.]+)')


def op_name_at(text: str, offset: int) -> str | None:
    """The name of the op whose text starts at ``offset`` (custom or generic form)."""
    match = _OP_NAME.match(text, offset)
    return match.group(1) if match else None


def format_location(op: Operation | None, fallback: str) -> str:
    """``file:line:col`` of ``op`` or of its nearest located ancestor; else ``fallback``."""
    while op is not None:
        place = first_place(op.location)  # a fused op: the op it replaced
        if place is not None:
            return place
        op = op.parent_op()
    return fallback


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "unknown error"


def parse_error_message(e: ParseError, line_offset: int = 0) -> str:
    loc = e.span.get_location()
    text = first_line(e.msg)
    if e.msg[:1].isspace():
        # xDSL gave only the context of its error (" in block definition"), e.g. at a
        # missing '}': say what went wrong.
        at_end = e.span.start >= len(e.span.input.content.rstrip())
        text = f"unexpected {'end of input' if at_end else 'input'} {text}"
    elif text == "Could not parse entire input!":
        text = "expected an operation"
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)  # a stray NUL byte
    return f"{loc.file}:{loc.line + line_offset}:{loc.col}: error: {text}"


@dataclass
class Source:
    """One input chunk: its text, the file name and the line it starts on (0-based offset)."""

    text: str
    name: str
    line_offset: int = 0


def parse_module(
    ctx: Context,
    source: Source,
    verify: Callable[[ModuleOp, str], None] | None = None,
) -> ModuleOp:
    """Parses and verifies ``source``; every error becomes a one-line ``FusecError``.

    ``verify`` (default: `verify_module`) may be an `IncrementalVerifier`'s, which then knows the
    module as verified when the passes start. Every operand must be defined before its use
    (`verify_defined_before_use`, whichever ``verify``), and no ``nn`` or ``fused`` op carries an
    attribute that is none of its parameters (`verify_no_unknown_attributes`). Input nested
    deeper than Python's recursion allows (``dense<[[[[...``, thousands of nested regions or
    types) is an error at the token where the parser gave up."""
    parser = None
    try:
        with paused_gc():
            parser = LocatedParser(ctx, source.text, source.name, source.line_offset)
            if parser.at_end():
                # As in mlir-opt: input without operations (empty, only comments) is an empty
                # module.
                return ModuleOp([])
            try:
                module = parser.parse_module()
            except AssertionError:
                # xDSL's parser asserts on some malformed input (fuzz mutant 1457:
                # ``dense<-2.5> : tensor<3x2xcomplex<f32>>``, a real for a complex type)
                raise FusecError(f"{current_token(parser, source)}: error: malformed input "
                                 "here (the parser could not read it)") from None
            except NotImplementedError as e:
                # xDSL packs constants' values with struct formats it has for some types
                # only (``array<i632: 1>``: fuzz mutant 339001)
                raise FusecError(f"{current_token(parser, source)}: error: a constant before "
                                 f"here has values fusec cannot store ({e})") from None
            except MemoryError:
                raise FusecError(f"{current_token(parser, source)}: error: out of memory reading "
                                 "the input here") from None
            except ValueError as e:
                # xDSL's integer constants refuse a value outside their type
                # (``dense<[0, 99999999999]> : tensor<2xi32>``: fuzz mutant 505064)
                if "out of range" not in str(e):
                    raise
                raise FusecError(f"{current_token(parser, source)}: error: a number before here "
                                 f"is out of range for its type ({first_line(str(e))})") from None
            except OverflowError:
                # A literal too large for its type, where xDSL's parser packs it
                # (``arith.constant 0xff800000 : f16``, ``dense<0xff800000> : tensor<2xf16>``)
                raise FusecError(f"{current_token(parser, source)}: error: a number here is out "
                                 "of range for its type") from None
        with paused_gc():
            (verify or verify_module)(module, source.name)
            verify_defined_before_use(module, source.name)
            verify_no_unknown_attributes(module, source.name)
            verify_donations(module, source.name)
    except ParseError as e:
        raise FusecError(parse_error_message(at_first_use(e), source.line_offset)) from None
    except RecursionError:
        where = current_token(parser, source)
        raise FusecError(f"{where}: error: input nested too deeply to parse") from None
    return module


def current_token(parser: Parser | None, source: Source) -> str:
    """``file:line:col`` of the token ``parser`` stopped at (the source's start without one)."""
    if parser is None:
        return f"{source.name}:{source.line_offset + 1}:1"
    loc = parser._current_token.span.get_location()  # pyright: ignore[reportPrivateUsage]
    return f"{loc.file}:{loc.line + source.line_offset}:{loc.col}"


_UNDEFINED = re.compile(r"values used but not defined: \[(%[^\],]+)")


def at_first_use(e: ParseError) -> ParseError:
    """xDSL reports values used but never defined at the end of the input; move the error to
    the first use of the first such value (outside comments)."""
    match = _UNDEFINED.match(e.msg)
    if match is None:
        return e
    name = match.group(1)
    text = e.span.input.content
    for use in re.finditer(re.escape(name) + r"(?![\w$.-])", text):
        line_start = text.rfind("\n", 0, use.start()) + 1
        if "//" not in text[line_start : use.start()]:
            span = Span(use.start(), use.end(), e.span.input)
            return ParseError(span, e.msg)
    return e


def verify_module(module: ModuleOp, filename: str) -> None:
    """Verifies op by op, innermost first, so that an error names the op that failed (an op
    whose signature passed before only once: `SignatureVerifier`)."""
    signatures = SignatureVerifier(lambda op: verify_op(op, filename))
    for op in module.walk(region_first=True):
        signatures.verify(op)


def verify_op(op: Operation, filename: str) -> None:
    """Verifies ``op`` alone (not the ops nested in it); a one-line `FusecError` if invalid."""
    try:
        op.verify(verify_nested_ops=False)
    except VerifyException as e:
        message = first_trait_failure(op, str(e))
        raise FusecError(located_message(op, filename, message)) from None


def verify_defined_before_use(module: ModuleOp, filename: str) -> None:
    """Every operand is defined before its use, in the same block or an enclosing one (xDSL's
    verifier does not check dominance: ``%b = nn.add %a, ...`` above ``%a = ...`` parsed, and
    the lowering failed on it). Blocks of regions with several blocks are not checked."""
    position: dict[Operation, int] = {}
    for op in module.walk():
        for region in op.regions:
            for block in region.blocks:
                for i, inner in enumerate(block.ops):
                    position[inner] = i
    for op in module.walk():
        for index, operand in enumerate(op.operands):
            if not visible(operand, op, position):
                name = f"%{operand.name_hint}" if operand.name_hint else "a value"
                raise FusecError(located_message(
                    op, filename, f"'{op.name}' operand #{index} ({name}) is used before it is "
                    "defined"))


def verify_donations(module: ModuleOp, filename: str) -> None:
    """Every ``fusec.aliasing_output`` argument attribute names a result of the argument's
    type, one argument per result (`fusec.dialects.donation.aliased_outputs`), as an error at
    the function."""
    for op in module.ops:
        if isinstance(op, func.FuncOp):
            try:
                aliased_outputs(op)
            except VerifyException as e:
                raise FusecError(located_message(op, filename, str(e))) from None


def verify_no_unknown_attributes(module: ModuleOp, filename: str) -> None:
    """An ``nn`` or ``fused`` op carries its parameters as properties and nothing else: an
    attribute that is not one (``nn.gelu %x {aproximate = "tanh"}``, ``nn.softmax %x {axes =
    0 : i64}``) is a misspelled parameter, which xDSL keeps as a discardable attribute while
    the op computes with its default, silently. It is an error at the op."""
    for op in module.walk():
        if op.dialect_name() not in ("nn", "fused") or not op.attributes:
            continue
        name = sorted(op.attributes)[0]
        definition = type(op).get_irdl_definition()  # type: ignore[attr-defined]
        if name in definition.properties:  # the generic form's {...} instead of <{...}>
            message = (f"'{op.name}' parameter '{name}' is given as an attribute; in the "
                       "generic form parameters go in <{...}>")
        else:
            known = ", ".join(definition.properties) or "none"
            message = f"'{op.name}' has no parameter '{name}' (its parameters: {known})"
        raise FusecError(located_message(op, filename, message))


def visible(value: SSAValue, user: Operation, position: dict[Operation, int]) -> bool:
    """Whether ``value`` is defined before ``user`` in ``user``'s block or an enclosing one."""
    if isinstance(value, BlockArgument):
        block = value.block
        ancestor: Operation | None = user
        while ancestor is not None:
            if ancestor.parent_block() is block:
                return True
            ancestor = ancestor.parent_op()
        return False
    assert isinstance(value, OpResult)
    owner = value.op
    block = owner.parent_block()
    if block is None or (block.parent is not None and len(block.parent.blocks) > 1):
        return True
    ancestor = user
    while ancestor is not None:
        if ancestor.parent_block() is block:
            return position.get(owner, -1) < position.get(ancestor, -1)
        ancestor = ancestor.parent_op()
    return False


def first_trait_failure(op: Operation, message: str) -> str:
    """``message``, or the first failing trait's message when a trait raised it.

    xDSL keeps an op's traits in a frozenset, so when two traits fail (a ``fused.yield`` that is
    neither last in its block nor inside a fused region) the one it reports changes from run to
    run. Re-checking the traits in the order of their names makes the message deterministic.
    """
    failures: list[str] = []
    for trait in sorted(op.traits, key=lambda t: (type(t).__name__, repr(t))):
        try:
            trait.verify(op)
        except VerifyException as e:
            failures.append(first_line(str(e)))
    return failures[0] if first_line(message) in failures else message


def op_message(name: str | None, message: str) -> str:
    """The first line of ``message``, starting with ``'<name>'`` like fusec's own verifiers.

    xDSL's generic messages neither start with the op name nor agree on where they put it
    (``property 'axis' expected in operation 'nn.narrow'``, ``Operation arith.addf terminates
    ...``): this puts it in front, once.
    """
    text = first_line(message)
    if name is None or text.startswith("'"):
        return text
    text = text.removeprefix(f"Operation {name} ").removesuffix(f" in operation '{name}'")
    return f"'{name}' {text}"


def located_message(op: Operation | None, filename: str, message: str) -> str:
    text = op_message(op.name if op is not None else None, message)
    return f"{format_location(op, filename)}: error: {text}"


def diagnostic_message(e: DiagnosticException, filename: str) -> str:
    """A one-line message for an exception raised by a pass, at the op it names if any."""
    op = getattr(e, "op", None)
    where = format_location(op, filename) if isinstance(op, Operation) else filename
    return f"{where}: error: {first_line(str(e))}"


def split_input(text: str, name: str) -> list[Source]:
    """Splits on lines that are exactly ``// -----``, keeping each chunk's line offset."""
    chunks: list[Source] = []
    lines = text.splitlines(keepends=True)
    start = 0
    current: list[str] = []
    for i, line in enumerate(lines):
        if line.strip() == "// -----":
            chunks.append(Source("".join(current), name, start))
            current, start = [], i + 1
        else:
            current.append(line)
    chunks.append(Source("".join(current), name, start))
    return chunks
