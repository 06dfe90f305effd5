"""`bench.graph.Tensor.nbytes` for every element type a workload uses, bf16 included (numpy has
no bfloat16: `fusec-bench --json-out` of a bf16 workload once crashed here)."""

from fusec.bench.graph import Tensor


def test_bytes_of_each_element_type():
    assert Tensor("x", (3, 4), "bfloat16").nbytes == 24
    assert Tensor("x", (3, 4), "float16").nbytes == 24
    assert Tensor("x", (3, 4), "float32").nbytes == 48
