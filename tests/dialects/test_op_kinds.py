"""Every registered ``nn`` and ``fused`` op declares its fusion kind (``FUSION_KIND``), and the
kinds agree with what the rest of the compiler can do with an op of that kind."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import StringAttr, TensorType, f32, i1
from xdsl.ir import Block

from fusec.dialects import fused, nn
from fusec.dialects.op_kinds import OpKind, declared_kind, op_kind
from fusec.dialects.scalar_ops import ELEMENTWISE_OPS, build_scalar, is_elementwise

REGISTERED = [*nn.NN.operations, *fused.Fused.operations]


@pytest.mark.parametrize("cls", REGISTERED, ids=lambda c: c.name)
def test_every_registered_op_declares_a_kind(cls):
    assert declared_kind(cls) is not None, (
        f"{cls.name} declares no FUSION_KIND (see fusec/dialects/op_kinds.py)"
    )


def test_a_new_op_without_a_kind_is_caught():
    class Undeclared:
        name = "nn.undeclared"

    assert declared_kind(Undeclared) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("cls", ELEMENTWISE_OPS, ids=lambda c: c.name)
def test_every_elementwise_nn_op_has_a_scalar_form(cls):
    """The fusers take any op of the elementwise kind into a scalar body: it must have one."""
    t = TensorType(f32, [4])
    count = len(cls.get_irdl_definition().operands)
    types = [TensorType(i1, [4]), t, t] if cls is nn.WhereOp else [t] * count
    values = Block(arg_types=types).args
    props = {"predicate": StringAttr("lt")} if cls is nn.CmpOp else {}
    result = TensorType(i1, [4]) if cls is nn.CmpOp else t
    op = cls.create(operands=list(values), result_types=[result], properties=props)
    scalars = Block(arg_types=[v.type.element_type for v in values]).args
    ops, value = build_scalar(op, list(scalars))
    assert value.type == result.element_type


def test_elementwise_ops_are_those_of_the_kind():
    assert nn.ExpOp in ELEMENTWISE_OPS and nn.WhereOp in ELEMENTWISE_OPS
    assert nn.TransposeOp not in ELEMENTWISE_OPS and nn.ReduceSumOp not in ELEMENTWISE_OPS


def test_families_and_single_ops():
    expect = {
        nn.AddOp: OpKind.ELEMENTWISE,
        nn.GeluOp: OpKind.ELEMENTWISE,
        nn.WhereOp: OpKind.ELEMENTWISE,
        nn.TransposeOp: OpKind.INJECTIVE,
        nn.NarrowOp: OpKind.INJECTIVE,
        nn.ConcatOp: OpKind.INJECTIVE,
        nn.ReshapeOp: OpKind.INJECTIVE,
        nn.GatherOp: OpKind.INJECTIVE,
        nn.ReduceMeanOp: OpKind.REDUCTION,
        nn.SoftmaxOp: OpKind.REDUCTION,
        nn.MatmulOp: OpKind.GEMM,
        nn.AttentionOp: OpKind.GEMM,
        nn.ConstantOp: OpKind.OPAQUE,
        fused.ElementwiseOp: OpKind.ELEMENTWISE,
        fused.MatmulEpilogueOp: OpKind.GEMM,
        fused.TransformerLayerOp: OpKind.OPAQUE,
    }
    for cls, kind in expect.items():
        assert declared_kind(cls) is kind, cls.name


def test_an_op_of_another_dialect_is_opaque():
    x = Block(arg_types=[f32]).args[0]
    add = arith.AddfOp(x, x)
    assert op_kind(add) is OpKind.OPAQUE
    assert not is_elementwise(add)
