"""Verifying an ``nn`` or ``fused`` op once per signature.

The verifiers of fusec's ``nn`` and ``fused`` ops without regions read nothing but the op's
*signature*: its class, the types of its operands and results, its properties and attributes,
and the class of its parent op (``fused.reduce_value`` must sit in a row reduction); xDSL's
generic checks add whether it ends its block. A program of 10^5 ops has a few dozen signatures,
and verifying each op (xDSL's constraint checks, then fusec's shape checks) was a fifth of the
pipeline's time. `SignatureVerifier` verifies an op whose signature passed before only once:
attributes compare by value (floats by their bits), so an op with an equal signature passes too.
Ops share their type and property objects (the parser and the passes reuse them), so a signature
is looked up first by the identity of its attributes, which costs no attribute hash (hashing
nested attributes was a third of the lookups' time); then by value.

Ops of other dialects, ops with regions or successors, ops with a trait other than ``Pure``,
ops that end their block, ops with an erased operand and ops whose class declares
``VERIFY_READS_OPERANDS`` (``nn.gather`` checks constant indices) are verified every time.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from xdsl.ir import ErasedSSAValue, Operation
from xdsl.irdl import IRDLOperation
from xdsl.traits import Pure

MEMO_DIALECTS = frozenset({"nn", "fused"})
"""Dialects whose region-free ops' verifiers read only the signature (audited: dialects/nn.py,
dialects/fused.py)."""


def memoizable_class(cls: type[Operation]) -> bool:
    """Whether ``cls``'s verifier reads only the signature (its dialect and traits)."""
    return (
        issubclass(cls, IRDLOperation)
        and cls.dialect_name() in MEMO_DIALECTS
        and not getattr(cls, "VERIFY_READS_OPERANDS", False)
        and all(type(trait) is Pure for trait in cls.get_irdl_definition().traits)
    )


class SignatureVerifier:
    """Verifies ops with ``verify`` (which raises on an invalid op), skipping an op whose
    signature passed before."""

    def __init__(self, verify: Callable[[Operation], None]):
        self._verify = verify
        self._classes: dict[type[Operation], bool] = {}
        self._passed: set[Hashable] = set()
        self._passed_identities: dict[Hashable, Hashable] = {}
        """A passed signature by the identities of its attributes (each value keeps those
        attributes alive, so that no other object takes their ids)."""

    def signature(self, op: Operation) -> tuple[object, ...] | None:
        """What ``op``'s verification depends on, or None when it must always be verified."""
        cls = type(op)
        memoizable = self._classes.get(cls)
        if memoizable is None:
            memoizable = self._classes[cls] = memoizable_class(cls)
        if not memoizable or op.regions or op.successors:
            return None
        block = op.parent
        if block is None or block.last_op is op:
            return None
        operand_types = []
        for operand in op.operands:
            if isinstance(operand, ErasedSSAValue):
                return None
            operand_types.append(operand.type)
        parent = block.parent_op()
        return (
            cls,
            tuple(operand_types),
            tuple(r.type for r in op.results),
            tuple(op.properties.items()),
            tuple(op.attributes.items()),
            type(parent),
        )

    def verify(self, op: Operation) -> None:
        key = self.signature(op)
        if key is None:
            self._verify(op)
            return
        identity = identity_of(key)
        if identity in self._passed_identities:
            return
        if key not in self._passed:
            self._verify(op)
            self._passed.add(key)
        self._passed_identities[identity] = key


def identity_of(signature: tuple[object, ...]) -> Hashable:
    """``signature`` (as `SignatureVerifier.signature` builds it) with each attribute replaced
    by its id: equal for two signatures made of the same attribute objects."""
    cls, operand_types, result_types, properties, attributes, parent = signature
    return (
        cls,
        tuple(map(id, operand_types)),  # type: ignore[arg-type]
        tuple(map(id, result_types)),  # type: ignore[arg-type]
        tuple((name, id(value)) for name, value in properties),  # type: ignore[attr-defined]
        tuple((name, id(value)) for name, value in attributes),  # type: ignore[attr-defined]
        parent,
    )
